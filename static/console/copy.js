// Copy buttons (templates/console/copy.html): one listener for the whole page, so the
// buttons htmx swaps in work too, and no inline handler (the CSP allows none).
(function () {
  "use strict";

  var SHOWN_MS = 1500;

  function announce(text) {
    var region = document.getElementById("announcer");
    if (!region) return;
    // Emptied first: a screen reader says "Copied" again for a second copy.
    region.textContent = "";
    setTimeout(function () { region.textContent = text; }, 50);
  }

  // navigator.clipboard needs a secure context: a hub reached over plain HTTP on
  // another address than localhost has none, and execCommand still works there.
  function copyBySelection(text, button) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    var copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    area.remove();
    button.focus();  // the selection took it
    return copied;
  }

  function done(button, copied) {
    announce(copied ? "Copied" : "Could not copy: select the text and copy it by hand");
    if (!copied) return;
    button.classList.add("copied");
    button.textContent = "Copied";
    clearTimeout(Number(button.dataset.timer));
    button.dataset.timer = String(setTimeout(function () {
      button.classList.remove("copied");
      button.textContent = "Copy";
    }, SHOWN_MS));
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("button.copy[data-copy]") : null;
    if (!button) return;
    var text = button.dataset.copy;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { done(button, true); },
        function () { done(button, copyBySelection(text, button)); }
      );
    } else {
      done(button, copyBySelection(text, button));
    }
  });
})();
