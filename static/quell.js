// Progressive enhancement only: every page works without this file.
// Keeps "open for" durations and "due in" countdowns ticking so a page left open on a wall
// screen stays true.
(function () {
  function fmt(secs) {
    var total = Math.max(0, Math.floor(secs / 60));
    var d = Math.floor(total / 1440), h = Math.floor(total / 60) % 24, m = total % 60;
    var parts = [];
    if (d) parts.push(d + " d");
    if (h) parts.push(h + " h");
    if (m || !parts.length) parts.push(m + " min");
    return parts.join(" ");
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-running-since]").forEach(function (el) {
      var since = Date.parse(el.getAttribute("data-running-since"));
      if (!isNaN(since)) el.textContent = fmt((now - since) / 1000);
    });
    // Countdowns: "due in 6 min" runs down to "overdue by 1 min".
    document.querySelectorAll("[data-due-at]").forEach(function (el) {
      var due = Date.parse(el.getAttribute("data-due-at"));
      if (isNaN(due)) return;
      var left = (due - now) / 1000;
      el.textContent = left >= 0 ? "due in " + fmt(left) : "overdue by " + fmt(-left);
      el.classList.toggle("sla-overdue", left < 0);
      el.classList.toggle("sla-running", left >= 0);
    });
    // A claim not renewed in time lapses: it stays listed, marked, until the page next reads.
    document.querySelectorAll("[data-lapses-at]").forEach(function (el) {
      var at = Date.parse(el.getAttribute("data-lapses-at"));
      if (!isNaN(at) && at <= now && !el.classList.contains("lapsed")) {
        el.classList.add("lapsed");
        var note = document.createElement("div");
        note.className = "muted";
        note.textContent = "Lapsed: not renewed in time.";
        el.appendChild(note);
      }
    });
  }
  setInterval(tick, 15000);
  document.addEventListener("quell:refreshed", tick);
})();

// Steps that ask first: a dialog instead of the confirmation page (which still answers without
// JavaScript). Confirmed, the form carries confirm=yes and the server does not ask again.
(function () {
  function confirmed(form) {
    var yes = document.createElement("input");
    yes.type = "hidden"; yes.name = "confirm"; yes.value = "yes";
    form.appendChild(yes);
  }
  document.addEventListener("submit", function (ev) {
    var form = ev.target, button = ev.submitter;
    var why = button && button.getAttribute("data-confirm");
    if (!why && form.hasAttribute("data-confirm-change")) {
      var sev = form.querySelector('[name="severity"]');
      if (sev && sev.value !== form.getAttribute("data-current")) why = form.getAttribute("data-confirm-change");
    }
    if (!why) return;
    if (window.confirm(why + "\n\nGo ahead?")) confirmed(form); else ev.preventDefault();
  });
})();

// Time fields are UTC: a "now" button fills the current UTC time, whatever the browser's zone.
(function () {
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function utcNow() {
    var d = new Date();
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) +
      " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
  }
  document.querySelectorAll("input.utc-time").forEach(function (input) {
    var b = document.createElement("button");
    b.type = "button"; b.className = "link utc-now"; b.textContent = "now (UTC)";
    b.addEventListener("click", function () { input.value = utcNow(); });
    input.insertAdjacentElement("afterend", b);
  });
})();

// An open header menu closes when you click elsewhere.
(function () {
  document.addEventListener("click", function (ev) {
    document.querySelectorAll("header details.submenu[open]").forEach(function (d) {
      if (!d.contains(ev.target)) d.removeAttribute("open");
    });
  });
})();

// The address names the page as it now stands, so a reload or the live page's next read of
// itself asks for the page and not the form: a "saved" notice shows once (?saved= is dropped);
// a refused form came back as the page with the reason beside it (the browser has moved to it:
// the reason has autofocus), under the form's own address, which becomes the page's, at the part
// with the form.
(function () {
  if (!window.URL || !window.history || !history.replaceState) return;
  var url = new URL(location.href);
  var root = document.getElementById("live");
  var page = root && root.getAttribute("data-page");
  var refused = document.querySelector(".field-error[autofocus]");
  if (page && refused && url.pathname !== page) {
    var part = refused.closest("[id]");
    url = new URL(page + (part ? "#" + part.id : ""), location.href);
  }
  url.searchParams.delete("saved");
  var address = url.pathname + url.search + url.hash;
  if (address !== location.pathname + location.search + location.hash) {
    history.replaceState(history.state, "", address);
  }
})();

// Live pages: an element #live names the page's event stream. Each event makes the page read
// itself again and swap in the parts marked data-live, except a part you are typing in (it
// waits for your submit). A stream that drops or falls silent shows the page may be stale;
// the browser reconnects by itself and the server replays what was missed (Last-Event-ID).
(function () {
  var root = document.getElementById("live");
  if (!root || !window.EventSource || !window.fetch || !window.DOMParser) return;
  var status = document.getElementById("live-status");
  var src = root.getAttribute("data-stream") + "?after=" + encodeURIComponent(root.getAttribute("data-after") || "0");
  var es = null, heard = Date.now(), timer = null, fetching = false, again = false, broken = false;

  function say(text, cls) {
    if (!status) return;
    status.hidden = false;
    status.textContent = text;
    status.className = "live-status " + cls;
  }
  function live() { broken = false; say("Live: this page updates by itself.", "live-ok"); }
  function stale(text) { broken = true; say(text, "live-stale"); }

  function dirty(region) {
    // A refused form, its reason beside it and the typing in it, stays until sent again.
    if (region.querySelector(".field-error")) return true;
    var active = document.activeElement;
    if (active && active !== document.body && region.contains(active) &&
        /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
    return Array.prototype.some.call(region.querySelectorAll("input, textarea, select"), function (f) {
      if (f.type === "hidden" || f.type === "submit") return false;
      if (f.tagName === "SELECT") {
        return Array.prototype.some.call(f.options, function (o) { return o.selected !== o.defaultSelected; });
      }
      if (f.type === "checkbox" || f.type === "radio") return f.checked !== f.defaultChecked;
      return f.value !== f.defaultValue;
    });
  }

  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    fetch(location.pathname + location.search, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live][id]").forEach(function (region) {
          var fresh = doc.getElementById(region.id);
          if (!fresh || dirty(region)) return;
          region.replaceWith(document.importNode(fresh, true));
        });
        document.dispatchEvent(new CustomEvent("quell:refreshed"));
      })
      .catch(function () { stale("Could not reload this page's changes; reload it to be sure."); })
      .then(function () {
        fetching = false;
        if (again) { again = false; refresh(); }
      });
  }
  function soon() { clearTimeout(timer); timer = setTimeout(refresh, 120); }

  function connect() {
    es = new EventSource(src);
    es.addEventListener("open", function () {
      heard = Date.now();
      var wasBroken = broken;
      live();
      if (wasBroken) soon();
    });
    ["timeline", "changed"].forEach(function (name) {
      es.addEventListener(name, function () { heard = Date.now(); if (broken) live(); soon(); });
    });
    es.addEventListener("ping", function () { heard = Date.now(); if (broken) live(); });
    es.addEventListener("reload", function () { location.reload(); });
    es.addEventListener("ended", function () {
      es.close();
      stale("Your session ended: this page no longer updates. Sign in again.");
    });
    es.addEventListener("error", function () {
      if (es.readyState === EventSource.CLOSED) {
        stale("Live updates stopped; reload the page.");
      } else {
        stale("Live updates interrupted; reconnecting. What you see may be out of date.");
      }
    });
  }
  setInterval(function () {
    if (!broken && Date.now() - heard > 45000) {
      stale("No word from the server for a while; what you see may be out of date.");
    }
  }, 5000);
  connect();
})();


// Keyboard shortcuts on the incident page (listed with ?). None fires while typing in a field
// or with a modifier held; Escape leaves the field.
(function () {
  var help = document.getElementById("shortcuts");
  if (!help) return;
  document.querySelectorAll("[data-shortcuts-hint]").forEach(function (e) { e.hidden = false; });
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  function focusField(css) {
    var f = document.querySelector(css);
    if (!f) return false;
    f.focus();
    f.scrollIntoView({ block: "center" });
    return true;
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing) return;
    if (typing(ev.target)) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    var done = false;
    if (ev.key === "?") {
      help.hidden = !help.hidden;
      if (!help.hidden) help.focus();
      done = true;
    } else if (ev.key === "Escape" && !help.hidden) {
      help.hidden = true;
      done = true;
    } else if (ev.key === "n") {
      done = focusField(".note-form textarea[name=body]");
    } else if (ev.key === "c") {
      done = focusField(".claim-form input[name=subject]");
    } else if (ev.key === "a") {
      var ack = document.querySelector('form.steps button[name=action][value=acknowledge]');
      if (ack) { ack.click(); done = true; }
    }
    if (done) ev.preventDefault();
  });
})();
