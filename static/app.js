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
        // Numbers as the page writes them: thousands grouped ("1,500"),
        // at most one decimal (the share done).
        if (t) t.textContent = typeof d[k] === "number" ? d[k].toLocaleString("en-US", { maximumFractionDigits: 1 }) : d[k];
      });
      // The header's status badge lives outside the progress block.
      document.querySelectorAll("[data-run-status]").forEach(function (b) {
        b.textContent = d.status;
        b.className = "badge " + d.status_class;
      });
      // The judge's error and what to do, shown only while the run waits.
      var wait = el.querySelector("[data-waiting-box]");
      if (wait) wait.hidden = !d.waiting;
      var bar = el.querySelector("[data-bar]");
      if (bar && d.percent !== undefined) bar.style.width = d.percent + "%";
      if (d.finished || d.paused) { es.close(); window.location.reload(); }
    });
    var stopped = function (message) {
      var ended = el.querySelector("[data-stream-ended]");
      if (!ended || !ended.hidden) return;
      ended.textContent = message;
      ended.hidden = false;
    };
    // say shows message whatever was shown before (the polling's notes).
    var say = function (message) {
      var ended = el.querySelector("[data-stream-ended]");
      if (!ended) return;
      ended.textContent = message;
      ended.hidden = false;
    };
    var polled = "Live progress is not streamed to this page right now (too many pages following runs, or the server refused it): its figures refresh every 10 seconds.";
    var refused = "Live progress stopped: the server refused to go on sending it. Reload the page to see where the run is.";
    // The server ends the stream saying why (the reader lost access).
    es.addEventListener("ended", function (ev) {
      es.close();
      stopped(JSON.parse(ev.data).message);
    });
    // Without its stream (refused: too many open for this account, or a
    // server that cannot keep it), the block refreshes itself from the
    // page every 10 seconds, as the page without script does; a page
    // without the block's stream means the run ended or paused, and is
    // loaded whole. A refused page (signed out, removed) stops it.
    var url = el.getAttribute("data-run-events");
    var poll = function () {
      fetch(window.location.href, { credentials: "same-origin" })
        .then(function (r) {
          if (!r.ok || r.redirected) throw new Error("refused");
          return r.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = null;
          doc.querySelectorAll("[data-run-events]").forEach(function (b) {
            if (b.getAttribute("data-run-events") === url) fresh = b;
          });
          if (!fresh) { window.location.reload(); return; }
          el.innerHTML = fresh.innerHTML;
          var badges = doc.querySelectorAll("[data-run-status]");
          document.querySelectorAll("[data-run-status]").forEach(function (b, i) {
            if (badges[i]) { b.textContent = badges[i].textContent; b.className = badges[i].className; }
          });
          say(polled);
          window.setTimeout(poll, 10000);
        })
        .catch(function () { say(refused); });
    };
    es.onerror = function () {
      // The browser reconnects by itself after a dropped connection; it
      // gives up (CLOSED) when the reconnection is refused.
      if (es.readyState === EventSource.CLOSED) {
        if (window.fetch && window.DOMParser) {
          say(polled);
          window.setTimeout(poll, 10000);
        } else {
          stopped(refused);
        }
      }
    };
  });
  // The theme toggle posts a form (it works without script); here it acts
  // at once: set the cookie the server reads, mark <html>, relabel itself.
  document.querySelectorAll("form.theme-toggle").forEach(function (form) {
    var names = { "": "system", light: "light", dark: "dark" };
    var next = { "": "dark", dark: "light", light: "" };
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var input = form.querySelector('input[name="theme"]');
      var button = form.querySelector("button");
      var theme = input.value;
      var secure = location.protocol === "https:" ? "; Secure" : "";
      if (theme) {
        document.cookie = "theme=" + theme + "; Path=/; Max-Age=31536000; SameSite=Lax" + secure;
        document.documentElement.setAttribute("data-theme", theme);
      } else {
        document.cookie = "theme=; Path=/; Max-Age=0; SameSite=Lax" + secure;
        document.documentElement.removeAttribute("data-theme");
      }
      input.value = next[theme];
      button.textContent = "Theme: " + names[theme];
      button.title = "Colour theme: " + names[theme] + ". Switch to " + names[next[theme]] + ".";
      button.setAttribute("data-theme-current", theme);
    });
  });
  // A fetched answer is pasted into the page only when it is what the page
  // asked for: a 2xx answer, not redirected (to the sign-in page), and for
  // fragments marked by the server (X-Batcheval-Fragment). Anything else (a
  // session that expired, a proxy's error page) shows this plain text.
  var unloaded = "could not be loaded (your session may have expired, or the server is unreachable): reload the page.";
  function answer(r, fragment) {
    if (!r.ok || r.redirected || (fragment && !r.headers.get("X-Batcheval-Fragment"))) throw new Error("unexpected answer");
    return r.text();
  }
  function note(text) {
    var p = document.createElement("p");
    p.className = "muted";
    p.setAttribute("role", "status");
    p.setAttribute("data-testid", "fetch-failed");
    p.textContent = text;
    return p;
  }
  // A refusal the server marked as a fragment (4xx with
  // X-Batcheval-Fragment: a field it cannot read, a rubric it cannot find)
  // carries the server's own sentence: shown as text (never as markup),
  // in place of the generic one, which said nothing of what to change.
  // Unmarked refusals (an error page, a sign-in page) keep the generic one.
  function refusal(r) {
    return r.status >= 400 && r.status < 500 && !r.redirected && !!r.headers.get("X-Batcheval-Fragment");
  }
  function refusedNote(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var p = document.createElement("p");
    p.className = "error-text";
    p.setAttribute("role", "alert");
    p.setAttribute("data-testid", "preview-refused");
    p.textContent = (doc.body.textContent || "").trim();
    return p;
  }
  // Live previews: a form with data-preview-url posts itself (debounced)
  // and puts the returned fragment into the element named by
  // data-preview-target. Several requests may be in flight (typing goes on
  // while an answer is computed) and their answers may come back in any
  // order: each request takes the next number of its form, and only the
  // answer to the latest one is pasted, so an older, slower answer never
  // replaces a newer one.
  document.querySelectorAll("form[data-preview-url]").forEach(function (form) {
    var target = document.getElementById(form.getAttribute("data-preview-target"));
    if (!target) return;
    var timer = null;
    var latest = 0;
    function refresh() {
      var body = new FormData(form);
      var mine = ++latest;
      fetch(form.getAttribute("data-preview-url"), { method: "POST", body: body, headers: { "X-Requested-With": "fetch" } })
        .then(function (r) {
          if (refusal(r)) return r.text().then(function (html) { return { refused: html }; });
          return answer(r, true).then(function (html) { return { html: html }; });
        })
        .then(function (got) {
          if (mine !== latest) return;
          if (got.refused !== undefined) target.replaceChildren(refusedNote(got.refused));
          else target.innerHTML = got.html;
        })
        .catch(function () {
          if (mine !== latest) return;
          target.replaceChildren(note("The preview " + unloaded));
        });
    }
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refresh, 400); });
    form.addEventListener("change", function () { clearTimeout(timer); timer = setTimeout(refresh, 100); });
  });
  // Parts that follow a select: on change, load the page's GET form
  // (data-refresh-url) with the form's values and swap in the elements
  // whose ids data-refresh-parts lists (the launch form's criteria follow
  // the chosen rubric). Without JS, a submit button does the same reload.
  // As with the previews, only the answer to a select's latest change is
  // used: choosing one rubric, then another, never ends on the first's
  // criteria because its answer came last.
  document.querySelectorAll("select[data-refresh-url]").forEach(function (sel) {
    var latest = 0;
    sel.addEventListener("change", function () {
      var form = sel.form;
      if (!form) return;
      var query = new URLSearchParams(new FormData(form)).toString();
      var failed = sel.parentNode.querySelector('[data-testid="fetch-failed"]');
      if (failed) failed.remove();
      var mine = ++latest;
      fetch(sel.getAttribute("data-refresh-url") + "?" + query, { headers: { "X-Requested-With": "fetch" } })
        .then(function (r) {
          if (refusal(r)) return r.text().then(function (html) { return { refused: html }; });
          return answer(r, false).then(function (html) { return { html: html }; });
        })
        .then(function (got) {
          if (mine !== latest) return;
          if (got.refused !== undefined) {
            var said = refusedNote(got.refused);
            said.setAttribute("data-testid", "fetch-failed");
            sel.insertAdjacentElement("afterend", said);
            return;
          }
          var html = got.html;
          var doc = new DOMParser().parseFromString(html, "text/html");
          sel.getAttribute("data-refresh-parts").split(" ").forEach(function (id) {
            var now = document.getElementById(id), next = doc.getElementById(id);
            if (now && next) now.replaceWith(document.importNode(next, true));
          });
          form.dispatchEvent(new Event("change", { bubbles: true }));
        })
        .catch(function () {
          if (mine !== latest) return;
          sel.insertAdjacentElement("afterend", note("The parts that follow this choice " + unloaded));
        });
    });
  });
})();
