// While a slow htmx request runs (one whose element has a loading indicator: hx-indicator,
// or an .htmx-indicator inside), the region it will replace says so to assistive
// technology with aria-busy; the indicator says it on screen. Polls stay quiet.
(function () {
  "use strict";

  function region(event) {
    var elt = event.detail && event.detail.elt;
    var target = event.detail && event.detail.target;
    if (!(elt instanceof Element) || !(target instanceof Element)) return null;
    return elt.hasAttribute("hx-indicator") || elt.querySelector(".htmx-indicator") ? target : null;
  }

  // beforeSend, not beforeRequest: a request another listener cancels never ends.
  document.addEventListener("htmx:beforeSend", function (event) {
    var target = region(event);
    if (target) target.setAttribute("aria-busy", "true");
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var target = region(event);
    if (target) target.removeAttribute("aria-busy");
  });
})();
