// The Approvals inbox: keyboard shortcuts, a check of edited arguments before they are
// sent, live ages and expiries, and the rules that keep the 2-second poll from wiping a
// card its operator is working on. A file, not inline: the CSP allows no inline script.
(function () {
  "use strict";

  // Refusals the server renders as the card itself (errors, "already decided by …");
  // the console's htmx configuration swaps no 4xx answer by default.
  const ANSWERED_ON_THE_CARD = [400, 403, 409];

  const TYPES = {
    object: (value) => value !== null && typeof value === "object" && !Array.isArray(value),
    array: (value) => Array.isArray(value),
    string: (value) => typeof value === "string",
    number: (value) => typeof value === "number",
    integer: (value) => Number.isInteger(value),
    boolean: (value) => typeof value === "boolean",
    null: (value) => value === null,
  };

  function cards() {
    return Array.from(document.querySelectorAll("#pending-list .approval"));
  }

  function isPending(card) {
    return card.classList.contains("pending");
  }

  // --- Ages and expiries, counted on the server's clock (each card says its time) ---

  function duration(seconds) {
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return s + " s";
    const minutes = Math.floor(s / 60);
    if (minutes < 60) return minutes + " min";
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return hours + " h " + (minutes % 60) + " min";
    return Math.floor(hours / 24) + " days";
  }

  function tick() {
    for (const card of document.querySelectorAll(".approval.pending[data-now]")) {
      if (!card.dataset.skew) card.dataset.skew = String(Number(card.dataset.now) * 1000 - Date.now());
      const now = (Date.now() + Number(card.dataset.skew)) / 1000;
      const age = card.querySelector("[data-age]");
      if (age) age.textContent = "asked " + duration(now - Number(age.dataset.age)) + " ago";
      const left = card.querySelector("[data-left]");
      if (left) {
        const seconds = Number(left.dataset.left) - now;
        left.textContent = seconds > 0 ? "expires in " + duration(seconds) : "expired";
        left.classList.toggle("soon", seconds < 60);
      }
    }
  }

  // --- The JSON editor ---

  // The common JSON Schema keywords only: the server validates against the whole schema.
  function schemaProblem(value, schema, path) {
    const where = path || "the arguments";
    if (schema === false) return where + " is not allowed";
    if (schema === null || typeof schema !== "object") return null;
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.some((type) => TYPES[type] && TYPES[type](value))) return where + " must be " + types.join(" or ");
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
      return where + " must be one of " + schema.enum.map((option) => JSON.stringify(option)).join(", ");
    }
    if (typeof value === "number") {
      if (typeof schema.minimum === "number" && value < schema.minimum) return where + " must be at least " + schema.minimum;
      if (typeof schema.maximum === "number" && value > schema.maximum) return where + " must be at most " + schema.maximum;
    }
    if (TYPES.object(value)) {
      for (const name of Array.isArray(schema.required) ? schema.required : []) {
        if (!Object.prototype.hasOwnProperty.call(value, name)) return where + ": “" + name + "” is required";
      }
      const properties = TYPES.object(schema.properties) ? schema.properties : {};
      for (const [name, item] of Object.entries(value)) {
        const inner = path ? path + "." + name : name;
        let problem = null;
        if (Object.prototype.hasOwnProperty.call(properties, name)) {
          problem = schemaProblem(item, properties[name], inner);
        } else if (schema.patternProperties === undefined) {
          if (schema.additionalProperties === false) problem = where + ": “" + name + "” is not expected";
          else problem = schemaProblem(item, schema.additionalProperties, inner);
        }
        if (problem) return problem;
      }
    }
    if (Array.isArray(value) && TYPES.object(schema.items)) {
      for (let i = 0; i < value.length; i += 1) {
        const problem = schemaProblem(value[i], schema.items, where + "[" + i + "]");
        if (problem) return problem;
      }
    }
    return null;
  }

  function editProblem(form) {
    let args;
    try {
      args = JSON.parse(form.elements.args.value);
    } catch (error) {
      return "This is not valid JSON: " + error.message;
    }
    if (!TYPES.object(args)) return "The arguments must be a JSON object: {…}.";
    const schema = form.dataset.schema;  // an attribute: htmx drops the <script>s of swapped cards
    const problem = schema ? schemaProblem(args, JSON.parse(schema), "") : null;
    return problem ? "This does not fit the request's schema: " + problem + "." : null;
  }

  function showEditProblem(form) {
    const problem = editProblem(form);
    const box = form.querySelector("[data-testid=args-problem]");
    box.textContent = problem || "";
    box.hidden = !problem;
    form.elements.args.setAttribute("aria-invalid", problem ? "true" : "false");
    return problem;
  }

  // --- Keyboard ---

  function openPanel(card, name) {
    const panel = card.querySelector('details[data-panel="' + name + '"]');
    if (!panel) return;
    panel.open = true;
    panel.querySelector("textarea, input[type=text]").focus();
  }

  function move(from, step) {
    const all = cards();
    const index = all.indexOf(from);
    const next = index === -1 ? all[step > 0 ? 0 : all.length - 1] : all[index + step];
    if (next) {
      next.focus();
      next.scrollIntoView({ block: "nearest" });
    }
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || !(event.target instanceof Element)) return;
    const card = event.target.closest("#pending-list .approval");
    if (event.target.closest("input, textarea, select")) {
      if (event.key === "Escape" && card) {
        event.target.closest("details[data-panel]")?.removeAttribute("open");
        card.focus();
      }
      return;  // typing, not a shortcut
    }
    const onCard = card !== null && isPending(card);
    switch (event.key) {
      case "j":
        move(card, 1);
        break;
      case "k":
        move(card, -1);
        break;
      case "ArrowDown":
      case "ArrowUp":
        if (!card) return;  // the page scrolls as usual
        move(card, event.key === "ArrowDown" ? 1 : -1);
        break;
      case "a":
        if (!onCard || !card.querySelector("[data-decision=approve]")) return;
        card.querySelector("[data-decision=approve]").click();
        break;
      case "e":
        if (!onCard) return;
        openPanel(card, "edit");
        break;
      case "r":
        if (!onCard) return;
        openPanel(card, "reject");
        break;
      default:
        return;
    }
    event.preventDefault();
  });

  // --- Requests and swaps ---

  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt;
    if (!(form instanceof HTMLFormElement)) return;
    if (form.matches(".edit-form") && showEditProblem(form)) {
      event.preventDefault();  // refused here: nothing is sent
      form.elements.args.focus();
      return;
    }
    const card = form.closest(".approval");
    if (card && card.contains(document.activeElement)) card.dataset.hadFocus = "true";
  });

  document.addEventListener("input", (event) => {
    const card = event.target.closest && event.target.closest(".approval.pending");
    if (!card) return;
    card.dataset.dirty = "true";
    const form = event.target.form;
    const box = form && form.matches(".edit-form") ? form.querySelector("[data-testid=args-problem]") : null;
    if (box && !box.hidden) showEditProblem(form);  // clears the message once the text is fixed
  });

  document.addEventListener("htmx:beforeSwap", (event) => {
    const answered = event.detail.xhr.responseURL;
    if (event.target.id === "pending-list" && answered && !new URL(answered).pathname.startsWith("/approvals/pending/")) {
      event.detail.shouldSwap = false;  // the console session ended: the poll was sent to the login page
      window.location.assign(answered);
      return;
    }
    if (ANSWERED_ON_THE_CARD.includes(event.detail.xhr.status) && event.target.closest(".approval, #suspended-sessions")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // A decided card went where its operator was: on to the next request waiting. After
  // settling: until then a swapped card still wears the old one's attributes.
  document.addEventListener("htmx:afterSettle", (event) => {
    const config = event.detail.requestConfig;
    const old = config && config.elt instanceof Element ? config.elt.closest(".approval") : null;
    if (!old || old.dataset.hadFocus !== "true" || old.isConnected) return;
    delete old.dataset.hadFocus;
    const card = document.getElementById(old.id);
    if (!card) return;
    if (isPending(card)) {
      if (!card.contains(document.activeElement)) card.focus();
      return;
    }
    const all = cards();
    const next = all.slice(all.indexOf(card) + 1).find(isPending) || all.find(isPending);
    (next || card).focus();
  });

  // The poll replaces cards of requests decided elsewhere, except those being worked
  // on: their operator learns it from the answer to their own decision (409).
  function isBusy(card) {
    // A card still settling has just been swapped in by its operator's own decision: it
    // wears the old card's attributes until then (so looks pending), and replacing it
    // now would drop that swap's settle, and the move of the focus to the next card.
    return card.dataset.dirty === "true" || card.classList.contains("htmx-settling")
      || card.querySelector("details[open], .htmx-request") !== null;
  }

  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const card = event.detail.target;
    if (!card.classList.contains("approval")) return;
    if (!isPending(card) || isBusy(card)) {
      // Decided here already (the feed's look can cross this page's own decision), or
      // being worked on: leave the card, and the focus, as they are.
      event.detail.shouldSwap = false;
    } else if (card.contains(document.activeElement)) {
      setTimeout(() => document.getElementById(card.id)?.focus());
    }
  });

  document.addEventListener("htmx:afterSettle", tick);  // new cards count from their arrival
  document.addEventListener("DOMContentLoaded", tick);
  setInterval(tick, 1000);
})();
