// Progressive enhancement only: every page works without this file.
// Keeps "open for" durations ticking so a page left open on a wall screen stays true.
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
  }
  setInterval(tick, 30000);
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
