// The Review page: keyboard shortcuts like the Approvals inbox's. j / k (or the arrows on
// a row) move between the memories or groups; on a memory v verifies, f flags, q
// quarantines and r releases; on a group of duplicates 1-9 keeps that one and merges the
// others, n says they are not duplicates. Each presses the button it names, so the
// keyboard can do nothing the page's buttons cannot.
(() => {
  "use strict";

  const ITEMS = "[data-testid=review-row], [data-testid=duplicate-group]";
  const ACTIONS = { v: "verify", f: "flag", q: "quarantine", r: "release" };

  function items() {
    return Array.from(document.querySelectorAll(ITEMS));
  }

  function move(from, step) {
    const all = items();
    const index = all.indexOf(from);
    const next = index === -1 ? all[step > 0 ? 0 : all.length - 1] : all[index + step];
    if (next) {
      next.focus();
      next.scrollIntoView({ block: "nearest" });
    }
  }

  function press(button) {
    if (!button) return false;
    button.click();
    return true;
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || !(event.target instanceof Element)) return;
    if (event.target.closest("input, textarea, select")) return;  // typing, not a shortcut
    const item = event.target.closest(ITEMS);
    const key = event.key;
    let handled = false;
    if (key === "j" || key === "k") {
      move(item, key === "j" ? 1 : -1);
      handled = true;
    } else if ((key === "ArrowDown" || key === "ArrowUp") && item) {
      move(item, key === "ArrowDown" ? 1 : -1);
      handled = true;
    } else if (item && item.matches("[data-testid=review-row]") && ACTIONS[key]) {
      handled = press(item.querySelector(`button[name=action][value=${ACTIONS[key]}]`));
    } else if (item && item.matches("[data-testid=duplicate-group]")) {
      if (/^[1-9]$/.test(key)) {
        const keep = item.querySelectorAll("[data-testid=duplicate]")[Number(key) - 1];
        handled = press(keep && keep.querySelector("button[type=submit]"));
      } else if (key === "n") {
        handled = press(item.querySelector("[data-testid=not-duplicates]"));
      }
    }
    if (handled) event.preventDefault();
  });
})();
