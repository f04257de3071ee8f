// Keyboard review (progressive enhancement of the review forms; every page
// works without it): number keys rate, j/k go to the next/previous sample,
// ? shows the keys. In blind mode a number key saves the rating at once.
// Keys and clicks while a form is being saved are ignored.
(function () {
  var forms = document.querySelectorAll("form[data-review-form]");
  // formOf is the form a number key rates: the one holding the focus (a
  // sample page has one per criterion: the key rated the first one's while
  // the reviewer was in another's), else the page's only form.
  function formOf(el) {
    var f = el && el.closest ? el.closest("form[data-review-form]") : null;
    return f || (forms.length === 1 ? forms[0] : null);
  }
  var help = document.querySelector("[data-review-help]");
  var toggle = document.querySelector("[data-review-help-toggle]");
  function showHelp() { if (help) help.hidden = !help.hidden; }
  if (toggle) { toggle.hidden = false; toggle.addEventListener("click", showHelp); }
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable) return true;
    return tag === "INPUT" && ["radio", "checkbox", "button", "submit"].indexOf(el.type) < 0;
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev.target)) return;
    var link;
    if (ev.key === "j") link = document.querySelector("[data-review-next]");
    if (ev.key === "k") link = document.querySelector("[data-review-prev]");
    if (link) { ev.preventDefault(); window.location.href = link.href; return; }
    if (ev.key === "?") { ev.preventDefault(); showHelp(); return; }
    var form = formOf(ev.target);
    if (!form || !/^[0-9]$/.test(ev.key)) return;
    var box = form.querySelector('input[data-review-key="' + ev.key + '"]');
    if (!box) return;
    ev.preventDefault();
    if (form.hasAttribute("data-review-sending")) return;
    box.checked = true;
    box.focus();
    if (form.hasAttribute("data-review-autosubmit")) {
      var name = form.querySelector('input[name="reviewer"]');
      if (name && name.required && name.value.trim() === "") { name.focus(); return; }
      form.requestSubmit();
    }
  });
  // One save a form: a second key or click before the saved page comes
  // back would send the form again, naming the review it was opened with,
  // and the server refuses that as a stale page (a form from another
  // tab). A page shown again from the back-forward cache may save again.
  forms.forEach(function (f) {
    f.addEventListener("submit", function (ev) {
      if (f.hasAttribute("data-review-sending")) { ev.preventDefault(); return; }
      f.setAttribute("data-review-sending", "");
    });
  });
  window.addEventListener("pageshow", function () {
    forms.forEach(function (f) { f.removeAttribute("data-review-sending"); });
  });
})();
