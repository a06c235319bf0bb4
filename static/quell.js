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
