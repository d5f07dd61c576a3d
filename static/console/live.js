// Live pages (htmx SSE extension). Browsers resume an interrupted stream with the
// Last-Event-ID header themselves, but when a stream fails for good (the server went
// away) the extension opens a new one, which would start from its original URL and
// repeat or miss events. So new streams start after the last event received.
(function () {
  "use strict";
  var lastIds = {};

  function resumable(url) {
    var last = lastIds[url];
    if (!last) return url;
    var next = new URL(url, window.location.href);
    next.searchParams.set("last_event_id", last);
    return next.pathname + next.search;
  }

  function setState(text) {
    document.querySelectorAll("[data-testid=live-state]").forEach(function (el) { el.textContent = text; });
  }

  htmx.createEventSource = function (url) {
    var source = new EventSource(resumable(url), { withCredentials: true });
    source.addEventListener("timeline", function (event) {
      if (event.lastEventId) lastIds[url] = event.lastEventId;
    });
    source.addEventListener("end", function () { source.close(); setState("(ended: reload the page)"); });
    return source;
  };

  document.addEventListener("htmx:sseOpen", function () { setState("(live)"); });
  document.addEventListener("htmx:sseError", function () { setState("(reconnecting…)"); });
  // The first event replaces the empty state.
  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var empty = event.target.querySelector(":scope > li.empty");
    if (empty) empty.remove();
  });
})();
