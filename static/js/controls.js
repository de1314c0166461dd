// Knobs: the parameter panel's controls, the model picker and the prompt's
// size and cost estimate, shared by the playground and the compare panes.
//
// The panel's number boxes are the truth: a box left empty sends nothing,
// and a slider only mirrors its box (it has no name, so the page's readers
// never see it). A parameter is "unset" until the user types, slides or
// steps it, and the × button makes it unset again.
"use strict";

import { formatNumber } from "./stream.js";

// ---------- the parameter panel ----------

// wirePanel makes the controls of every panel box will ever hold work:
// sliders and boxes in step, arrow keys stepping by what fits the range,
// help on click or focus, the best_of hint. Listeners are delegated, so a
// panel swapped in later needs only syncPanel.
export function wirePanel(box) {
  // Capturing, so that the box is in step before the page's own input
  // listeners on the same element read it.
  box.addEventListener(
    "input",
    (e) => {
      const t = e.target;
      if (t.matches("[data-slider]")) {
        const num = t.parentElement.querySelector('input[type="number"]');
        num.value = String(roundTo(Number(t.value), t.step));
        // The page's own (bubbling) listeners then read a box in step.
        syncParam(t.closest(".param"));
      } else if (t.matches('.number-row input[type="number"]')) {
        syncParam(t.closest(".param"));
      }
      bestOfHint(box);
    },
    true,
  );
  box.addEventListener("change", () => bestOfHint(box));
  box.addEventListener("keydown", (e) => {
    const t = e.target;
    if (!t.matches("input[data-nudge]") || e.altKey || e.ctrlKey || e.metaKey) return;
    const dir = { ArrowUp: 1, ArrowDown: -1, PageUp: 10, PageDown: -10 }[e.key];
    if (!dir) return;
    e.preventDefault();
    t.value = String(nudge(t, dir));
    t.dispatchEvent(new Event("input", { bubbles: true }));
    t.dispatchEvent(new Event("change", { bubbles: true }));
  });
  box.addEventListener("click", (e) => {
    const help = e.target.closest("[data-help-toggle]");
    if (help) {
      const p = help.closest(".param");
      const open = !p.classList.contains("help-open");
      p.classList.toggle("help-open", open);
      help.setAttribute("aria-expanded", String(open));
      return;
    }
    const example = e.target.closest("[data-example]");
    if (example) {
      insertExample(box, example.dataset.example);
      return;
    }
    const unset = e.target.closest("[data-unset]");
    if (unset) {
      const num = unset.parentElement.querySelector('input[type="number"]');
      num.value = "";
      num.dispatchEvent(new Event("input", { bubbles: true }));
      num.dispatchEvent(new Event("change", { bubbles: true }));
      num.focus();
    }
  });
}

// insertExample fills the tools box or the schema box with an example to
// start from, and tells the page's listeners as typing would.
function insertExample(box, which) {
  const field = box.querySelector(which === "tools" ? '[name="tools"]' : '[name="response_format_schema"]');
  if (!field) return;
  field.value = JSON.stringify(which === "tools" ? EXAMPLE_TOOLS : EXAMPLE_SCHEMA, null, 2);
  const name = box.querySelector('[name="response_format_name"]');
  if (which !== "tools" && name && !name.value) name.value = "city_facts";
  field.dispatchEvent(new Event("input", { bubbles: true }));
  field.dispatchEvent(new Event("change", { bubbles: true }));
}

const EXAMPLE_TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather in a city.",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string", description: "City name, e.g. Lisbon" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        },
        required: ["city"],
        additionalProperties: false,
      },
    },
  },
];

const EXAMPLE_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string" },
    country: { type: "string" },
    population: { type: "integer", minimum: 0 },
    landmarks: { type: "array", items: { type: "string" }, maxItems: 5 },
  },
  required: ["city", "country", "population"],
  additionalProperties: false,
};

// syncPanel puts every slider of box where its box says, after the page
// filled the boxes itself (which fires no events).
export function syncPanel(box) {
  for (const p of box.querySelectorAll(".param")) if (p.querySelector(".number-row")) syncParam(p);
  bestOfHint(box);
}

function syncParam(p) {
  const num = p.querySelector('.number-row input[type="number"]');
  const slider = p.querySelector("[data-slider]");
  const unset = num.value.trim() === "";
  p.classList.toggle("unset", unset);
  if (!slider) return;
  slider.value = unset || Number.isNaN(Number(num.value)) ? slider.defaultValue : num.value;
}

// nudge is the box's value one step (dir steps) on: to the next multiple
// of the step, so 0.75 goes up to 0.8, within the box's bounds. An empty
// box starts from where its slider rests.
function nudge(input, dir) {
  const step = Number(input.dataset.nudge);
  const slider = input.parentElement.querySelector("[data-slider]");
  let v = Number(input.value.trim() === "" ? (slider ? slider.defaultValue : input.min || 0) : input.value);
  if (Number.isNaN(v)) v = 0;
  const k = v / step;
  const eps = 1e-9;
  let next = dir > 0 ? (Math.floor(k + eps) + dir) * step : (Math.ceil(k - eps) + dir) * step;
  if (input.min !== "") next = Math.max(next, Number(input.min));
  if (input.max !== "") next = Math.min(next, Number(input.max));
  return roundTo(next, input.dataset.nudge);
}

// roundTo drops float noise: 0.1 * 8 is 0.8 here, not 0.8000000000000002.
function roundTo(v, step) {
  const s = String(step);
  const dot = s.indexOf(".");
  const digits = dot < 0 ? 0 : s.length - dot - 1;
  return Number(v.toFixed(Math.min(digits + 1, 10)));
}

// bestOfHint says what n and best_of as set will do, as they change.
function bestOfHint(box) {
  const p = box.querySelector('.param[data-param="best_of"]');
  const note = p && p.querySelector(".note");
  if (!note) return;
  if (note.dataset.base === undefined) note.dataset.base = note.textContent;
  const val = (name) => {
    const el = box.querySelector(`[name="${name}"]`);
    return el && !el.disabled ? el.value.trim() : "";
  };
  const best = Number(val("best_of") || 1);
  const n = Number(val("n") || 1);
  const stream = val("stream");
  let text = note.dataset.base;
  let bad = false;
  if (best > 1 && stream !== "false") {
    text = `best_of ${best} cannot be streamed: set stream to false (Advanced) for one JSON answer, or best_of to 1.`;
    bad = true;
  } else if (val("best_of") !== "" && best < n) {
    text = `best_of (${best}) must be at least n (${n}): it is the number of candidates, of which the best n are returned.`;
    bad = true;
  } else if (best > 1) {
    text = `${best} candidates are generated and the best ${n} returned: all ${best} are paid for.`;
  }
  note.textContent = text;
  note.classList.toggle("bad", bad);
}

// ---------- the model picker ----------

let pickers = 0;

// ModelPicker turns a model input into a searchable list of the
// provider's models, each with its context window, price and
// capabilities. What the input holds is what runs: a typed id that is not
// in the list is kept as typed.
export class ModelPicker {
  constructor(input) {
    this.input = input;
    this.models = [];
    this.shown = [];
    this.active = -1;
    this.typed = false;
    const id = (input.id || `model-picker-${++pickers}`) + "-list";
    const list = document.createElement("ul");
    list.id = id;
    list.className = "model-list";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Models");
    list.hidden = true;
    this.list = list;
    input.removeAttribute("list"); // the picker replaces the browser's suggestions
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-controls", id);
    input.parentElement.classList.add("picker-host");
    input.after(list);

    // It opens on a click, on typing or on ArrowDown, not on the focus
    // alone: tabbing through the toolbar should not drop a list over it.
    input.addEventListener("click", () => this.open(this.typed));
    input.addEventListener("input", () => {
      if (document.activeElement === input) this.open(true);
    });
    input.addEventListener("change", () => this.close());
    input.addEventListener("blur", () => this.close());
    input.addEventListener("keydown", (e) => this.key(e));
    // Keep the focus in the input while an option is clicked.
    list.addEventListener("mousedown", (e) => e.preventDefault());
    list.addEventListener("click", (e) => {
      const li = e.target.closest('[role="option"]');
      if (li) this.pick(li.dataset.value);
    });
  }

  // setModels gives the picker the provider's list ({id, hint, info}).
  setModels(models) {
    this.models = models || [];
    if (!this.list.hidden) this.render();
  }

  // info returns what is known of model id, or undefined.
  info(id) {
    const m = this.models.find((x) => x.id === id);
    return m && m.info;
  }

  open(filtered) {
    this.typed = filtered;
    this.render();
    this.list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
  }

  close() {
    this.list.hidden = true;
    this.typed = false;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
    this.active = -1;
  }

  render() {
    const typed = this.input.value.trim();
    const q = this.typed ? typed.toLowerCase() : "";
    this.shown = this.models.filter((m) => !q || m.id.toLowerCase().includes(q) || (m.info && (m.info.owned_by || "").toLowerCase().includes(q)));
    const items = this.shown.map((m) => ({ value: m.id, m }));
    if (this.typed && typed && !this.models.some((m) => m.id === typed)) {
      // An id the provider did not list (new, private, an alias) is sent as typed.
      items.push({ value: typed, custom: true });
    }
    this.items = items;
    const frag = document.createDocumentFragment();
    items.forEach((it, i) => {
      const li = document.createElement("li");
      li.id = `${this.list.id}-${i}`;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      li.dataset.value = it.value;
      const name = document.createElement("span");
      name.className = "opt-id";
      name.textContent = it.value;
      li.append(name);
      if (it.custom) {
        const s = document.createElement("span");
        s.className = "opt-facts";
        s.textContent = "not in the provider's list: sent as typed";
        li.append(s);
        li.classList.add("custom");
      } else {
        const d = describeModel(it.m.info || {});
        const facts = document.createElement("span");
        facts.className = "opt-facts";
        facts.textContent = [d.context, d.price].join(" · ");
        li.append(facts);
        if (d.caps.length) {
          const caps = document.createElement("span");
          caps.className = "opt-caps";
          for (const c of d.caps) {
            const b = document.createElement("span");
            b.className = "cap";
            b.textContent = c;
            caps.append(b);
          }
          li.append(caps);
        }
      }
      if (it.value === typed) li.classList.add("current");
      frag.append(li);
    });
    if (!items.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.setAttribute("role", "presentation");
      li.textContent = "No models listed: type a model id.";
      frag.append(li);
    }
    this.list.replaceChildren(frag);
    this.active = -1;
    this.input.removeAttribute("aria-activedescendant");
  }

  move(to) {
    const opts = this.list.querySelectorAll('[role="option"]');
    if (!opts.length) return;
    if (this.active >= 0 && opts[this.active]) opts[this.active].setAttribute("aria-selected", "false");
    this.active = (to + opts.length) % opts.length;
    const li = opts[this.active];
    li.setAttribute("aria-selected", "true");
    this.input.setAttribute("aria-activedescendant", li.id);
    li.scrollIntoView({ block: "nearest" });
  }

  key(e) {
    const openNow = !this.list.hidden;
    switch (e.key) {
      case "ArrowDown":
      case "ArrowUp": {
        e.preventDefault();
        if (!openNow) this.open(false);
        const down = e.key === "ArrowDown";
        this.move(this.active < 0 ? (down ? 0 : -1) : this.active + (down ? 1 : -1));
        break;
      }
      case "Enter":
        if (e.ctrlKey || e.metaKey) {
          this.close(); // Ctrl+Enter runs: let it through
          return;
        }
        if (openNow && this.active >= 0) {
          e.preventDefault();
          this.pick(this.items[this.active].value);
        } else if (openNow) {
          e.preventDefault();
          this.pick(this.input.value.trim());
        }
        break;
      case "Escape":
        if (openNow) {
          // Esc closes the list; it must not also stop a run.
          e.preventDefault();
          e.stopPropagation();
          this.close();
        }
        break;
      case "Tab":
        this.close();
        break;
    }
  }

  pick(value) {
    this.input.value = value;
    this.close();
    this.input.dispatchEvent(new Event("change", { bubbles: true }));
  }
}

// describeModel says in words what is known of a model: its context
// window, its price per million tokens in and out, its capabilities.
export function describeModel(info) {
  const caps = [];
  if (info.reasoning) caps.push("reasoning");
  if (info.tools) caps.push("tools");
  if (info.json_schema) caps.push("JSON schema");
  return {
    context: info.context_length ? `${shortTokens(info.context_length)} context` : "context not known",
    price: hasPrice(info) ? `${usd(info.prompt_price || 0)} in / ${usd(info.completion_price || 0)} out per M tokens` : "no price known",
    caps,
  };
}

function hasPrice(info) {
  // An admin's price of zero is a price: the model is free.
  return !!(info && (info.price_source === "admin" || info.prompt_price > 0 || info.completion_price > 0));
}

function shortTokens(n) {
  if (n >= 1e6) return `${Number((n / 1e6).toFixed(1))}M`;
  if (n >= 1000) return `${Math.round(n / 1000)}k`;
  return String(n);
}

const usdFormat = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumSignificantDigits: 3 });
function usd(v) {
  return usdFormat.format(v);
}

// ---------- token and cost estimate ----------

// countTokens counts tokens the way the simulator's tokenizer does (llm/sim
// tokens.go), which splits text roughly as BPE tokenizers do: words with
// their leading space, punctuation alone, long words and numbers in
// pieces. For hosted models it is an estimate, and labelled as one.
export function countTokens(s) {
  let n = 0;
  for (let i = 0; i < s.length; n++) i += tokenLen(s, i);
  return n;
}

const LETTER = /\p{L}/u;
const isLetter = (c) => c !== undefined && LETTER.test(c);
const isDigit = (c) => c >= "0" && c <= "9";

function charAt(s, i) {
  const cp = s.codePointAt(i);
  return cp === undefined ? undefined : String.fromCodePoint(cp);
}

function runLen(s, i, ch) {
  let j = i;
  while (j < s.length && s[j] === ch) j++;
  return j - i;
}

function tokenLen(s, i) {
  const c = charAt(s, i);
  if (c === "\n" || c === "\t") return runLen(s, i, c);
  if (c === " ") {
    const n = runLen(s, i, " ");
    if (i + n === s.length || s[i + n] === "\n") return n;
    if (n > 1) return n - 1; // indentation: the last space goes with the word
    return 1 + wordLen(s, i + 1);
  }
  return Math.max(c.length, wordLen(s, i));
}

function wordLen(s, i) {
  const c = charAt(s, i);
  if (c === undefined || c === " " || c === "\n" || c === "\t") return 0;
  if (isLetter(c)) {
    // Up to 12 letters are one token; longer words lose 8 at a time.
    let j = i;
    let letters = 0;
    let cut = 0;
    while (j < s.length && letters < 13) {
      const d = charAt(s, j);
      if (!isLetter(d)) break;
      j += d.length;
      if (++letters === 8) cut = j - i;
    }
    return letters > 12 ? cut : j - i;
  }
  if (isDigit(c)) {
    let j = i;
    while (j < s.length && j - i < 3 && isDigit(s[j])) j++;
    return j - i;
  }
  // Runs of the same mark (**, ##, ```) are common single tokens.
  let n = c.length;
  for (let k = 1; k < 3 && s.startsWith(c, i + n); k++) n += c.length;
  return n;
}

// promptTokens estimates the input tokens of a chat (messages, each with
// a few tokens of framing, as the simulator counts them) or of a
// completion prompt (texts).
export function promptTokens(endpoint, texts) {
  if (endpoint === "chat") return texts.reduce((n, t) => n + 4 + countTokens(t), 3);
  return texts.reduce((n, t) => n + countTokens(t), 0);
}

// costLine says what a run of the model can cost: the input as estimated,
// and the most the output can cost (price × max tokens × choices). limit
// is the max tokens the request sets, or null when it sets none.
export function costLine(info, input, limit, choices) {
  if (!hasPrice(info)) return "no price known";
  let out = limit;
  let fill = "";
  if (out == null || out < 0) {
    out = info.max_output || (info.context_length ? Math.max(info.context_length - input, 0) : 0);
    fill = info.max_output ? ", the model's output limit" : ", if the answer fills the context";
  }
  const inCost = (input * (info.prompt_price || 0)) / 1e6;
  const outCost = (out * choices * (info.completion_price || 0)) / 1e6;
  const times = choices > 1 ? ` × ${choices} choices` : "";
  const parts = [`input ≈ ${usd(inCost)}`];
  if (out > 0) parts.push(`output at most ${usd(outCost)} (${formatNumber(out)} tokens${times}${fill})`);
  else if (limit == null) parts.push("output: no limit known");
  return parts.join(" · ");
}

// tokenLine is the prompt's size as shown: always marked as an estimate,
// since a hosted model's own tokenizer is not at hand.
export function tokenLine(n) {
  return `≈ ${formatNumber(n)} tokens (estimate)`;
}
