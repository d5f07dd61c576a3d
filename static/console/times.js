// Relative times (memoryhub/console/templatetags/console_ui.py: when, when_exact) kept
// true while a page stays open, in the same words the server wrote them.
(function () {
  "use strict";

  function relative(moment) {
    var seconds = (Date.now() - moment) / 1000;
    var past = seconds >= 0;
    seconds = Math.abs(seconds);
    if (seconds < 60) return past ? "just now" : "in under a minute";
    var minutes = Math.floor(seconds / 60), hours = Math.floor(seconds / 3600), days = Math.floor(seconds / 86400);
    var amount;
    if (minutes < 90) amount = minutes + " min";
    else if (hours < 48) amount = hours + " h";
    else if (days < 60) amount = days + " days";
    else if (days < 730) amount = Math.floor(days / 30) + " months";
    else amount = Math.floor(days / 365) + " years";
    return past ? amount + " ago" : "in " + amount;
  }

  function refresh() {
    document.querySelectorAll("time[datetime]").forEach(function (time) {
      var moment = Date.parse(time.getAttribute("datetime"));
      if (isNaN(moment)) return;
      if (time.dataset.relative === "title") {
        time.title = relative(moment);
        return;
      }
      var text = time.querySelector("[data-relative]");
      if (text) text.textContent = relative(moment);
    });
  }

  setInterval(refresh, 60 * 1000);
})();
