// Progressive enhancement only: every page works without this file.
(function () {
  // Live run progress over server-sent events.
  document.querySelectorAll("[data-run-events]").forEach(function (el) {
    if (!window.EventSource) return;
    var es = new EventSource(el.getAttribute("data-run-events"));
    es.addEventListener("progress", function (ev) {
      var d = JSON.parse(ev.data);
      Object.keys(d).forEach(function (k) {
        var t = el.querySelector('[data-field="' + k + '"]');
        if (t) t.textContent = d[k];
      });
      // The header's status badge lives outside the progress block.
      document.querySelectorAll("[data-run-status]").forEach(function (b) {
        b.textContent = d.status;
        b.className = "badge " + d.status_class;
      });
      var bar = el.querySelector("[data-bar]");
      if (bar && d.percent !== undefined) bar.style.width = d.percent + "%";
      if (d.finished) { es.close(); window.location.reload(); }
    });
    es.onerror = function () { /* the browser reconnects by itself */ };
  });
  // Live previews: a form with data-preview-url posts itself (debounced)
  // and puts the returned HTML into the element named by data-preview-target.
  document.querySelectorAll("form[data-preview-url]").forEach(function (form) {
    var target = document.getElementById(form.getAttribute("data-preview-target"));
    if (!target) return;
    var timer = null;
    function refresh() {
      var body = new FormData(form);
      fetch(form.getAttribute("data-preview-url"), { method: "POST", body: body, headers: { "X-Requested-With": "fetch" } })
        .then(function (r) { return r.text(); })
        .then(function (html) { target.innerHTML = html; });
    }
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refresh, 400); });
    form.addEventListener("change", function () { clearTimeout(timer); timer = setTimeout(refresh, 100); });
  });
})();
