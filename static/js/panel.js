// Knobs: what a parameter panel holds, read and filled the same way by the
// playground and the compare panes, and the field errors shown beside its
// controls.
//
// One rule for the extra body, on every page: its fields go over the ones
// the panel's controls set (it is "merged into the body as sent"); the
// model, the messages and the prompt have their own editors and are not
// taken from it.
"use strict";

import { syncPanel } from "./controls.js";

// EDITED are the body fields a page's own editors set, never the panel.
const EDITED = ["model", "messages", "prompt"];

// parseJSON reads text as JSON; a mistake goes in errors under field.
function parseJSON(text, field, errors) {
  try {
    return JSON.parse(text);
  } catch (e) {
    errors[field] = "This is not valid JSON: " + e.message;
    return undefined;
  }
}

// readPanel returns the body fields box's panel sets, the extra body
// merged over its controls; mistakes go in errors, by the field the
// server would name.
export function readPanel(box, errors) {
  const { fields, extra } = readPanelParts(box, errors);
  return Object.assign(fields, extra);
}

// readPanelParts returns what the controls set and the extra body apart,
// so that a panel swapped for another keeps each where the user put it.
export function readPanelParts(box, errors) {
  const fields = {};
  let extra = {};
  for (const p of box.querySelectorAll(".param[data-param]")) {
    const name = p.dataset.param;
    const kind = p.dataset.kind;
    if (kind === "stop") {
      const vals = Array.from(p.querySelectorAll(`input[name="${name}"]`), (i) => i.value).filter((v) => v !== "");
      if (vals.length && !p.classList.contains("disabled")) fields[name] = vals;
      continue;
    }
    if (kind === "tool_choice") {
      const mode = p.querySelector('[name="tool_choice"]').value;
      const fn = p.querySelector('[name="tool_choice_function"]');
      fn.hidden = mode !== "function";
      if (mode === "function") {
        if (fn.value.trim()) fields.tool_choice = { type: "function", function: { name: fn.value.trim() } };
        else errors.tool_choice = "Name the function the model must call.";
      } else if (mode) fields.tool_choice = mode;
      continue;
    }
    if (kind === "response_format") {
      const rf = readResponseFormat(p, errors);
      if (rf) fields.response_format = rf;
      continue;
    }
    const input = p.querySelector(`[name="${name}"]`);
    if (!input || input.disabled || input.value.trim() === "") continue;
    const v = input.value.trim();
    if (kind === "number" || kind === "integer") {
      const n = Number(v);
      if (Number.isNaN(n)) errors[name] = "Enter a number.";
      else fields[name] = n;
    } else if (kind === "bool") fields[name] = v === "true";
    else if (kind === "json") {
      const parsed = parseJSON(v, name, errors);
      if (parsed === undefined) continue;
      if (name !== "extra_body") fields[name] = parsed;
      else if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) errors.extra_body = "Extra fields are a JSON object.";
      else {
        const edited = EDITED.filter((k) => k in parsed);
        if (edited.length) errors.extra_body = `Set ${edited.join(" and ")} in its own box, not in the extra fields.`;
        else extra = parsed;
      }
    } else fields[name] = input.value;
  }
  return { fields, extra };
}

// readResponseFormat reads the response_format control; a schema that is
// not JSON is reported under the field the server reports schemas under.
function readResponseFormat(p, errors) {
  const type = p.querySelector('[name="response_format_type"]').value;
  p.querySelector(".schema-fields").hidden = type !== "json_schema";
  if (!type) return null;
  const rf = { type };
  if (type !== "json_schema") return rf;
  const js = {};
  const nm = p.querySelector('[name="response_format_name"]').value.trim();
  if (nm) js.name = nm;
  const strict = p.querySelector('[name="response_format_strict"]').value;
  if (strict) js.strict = strict === "true";
  const schema = p.querySelector('[name="response_format_schema"]').value.trim();
  if (schema) {
    const parsed = parseJSON(schema, "response_format.json_schema.schema", errors);
    if (parsed !== undefined) js.schema = parsed;
  }
  rf.json_schema = js;
  return rf;
}

// applyPanel fills box's panel from body: each field into its control,
// the fields with no control (and extra's) into the extra body.
export function applyPanel(box, body, extra) {
  body = body || {};
  const controls = Array.from(box.querySelectorAll(".param[data-param]"));
  const known = new Set(controls.map((p) => p.dataset.param));
  const rest = {};
  for (const [k, v] of Object.entries(body)) if (!known.has(k) && !EDITED.includes(k)) rest[k] = v;
  Object.assign(rest, extra || {});
  for (const p of controls) {
    const name = p.dataset.param;
    const kind = p.dataset.kind;
    const v = body[name];
    if (kind === "stop") {
      const vals = v == null ? [] : Array.isArray(v) ? v : [v];
      p.querySelectorAll(`input[name="${name}"]`).forEach((i, n) => (i.value = vals[n] ?? ""));
    } else if (kind === "tool_choice") {
      const sel = p.querySelector('[name="tool_choice"]');
      const fn = p.querySelector('[name="tool_choice_function"]');
      const named = v && typeof v === "object";
      sel.value = named ? "function" : v || "";
      fn.value = named ? (v.function && v.function.name) || "" : "";
      fn.hidden = sel.value !== "function";
    } else if (kind === "response_format") {
      const rf = v || {};
      const js = rf.json_schema || {};
      p.querySelector('[name="response_format_type"]').value = rf.type || "";
      p.querySelector('[name="response_format_name"]').value = js.name || "";
      p.querySelector('[name="response_format_strict"]').value = js.strict === undefined ? "" : String(js.strict);
      p.querySelector('[name="response_format_schema"]').value = js.schema ? JSON.stringify(js.schema, null, 2) : "";
      p.querySelector(".schema-fields").hidden = rf.type !== "json_schema";
    } else if (name !== "extra_body") {
      const input = p.querySelector(`[name="${name}"]`);
      if (!input) continue;
      if (v === undefined || v === null) input.value = "";
      else if (kind === "json") input.value = JSON.stringify(v, null, 2);
      else input.value = String(v);
    }
  }
  const extraBox = box.querySelector('[name="extra_body"]');
  if (extraBox) extraBox.value = Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
  syncPanel(box);
}

// showFieldError puts msg beside field in scope: at the field's own
// message, or at its parameter's with the field's path in front
// ("response_format.json_schema.schema: ..."). It returns the element,
// or null when scope has no place for the field.
export function showFieldError(scope, field, msg) {
  let el = scope.querySelector(`[data-error-for="${CSS.escape(field)}"]`);
  const top = field.split(".")[0];
  if (!el && top !== field) {
    el = scope.querySelector(`[data-error-for="${CSS.escape(top)}"]`);
    msg = `${field}: ${msg}`;
  }
  if (!el) return null;
  el.textContent = msg;
  el.hidden = false;
  const param = el.closest(".param");
  if (param) param.classList.add("invalid");
  return el;
}

// clearFieldErrors hides every field message in scope.
export function clearFieldErrors(scope) {
  for (const e of scope.querySelectorAll(".field-error")) {
    e.hidden = true;
    e.textContent = "";
  }
  for (const e of scope.querySelectorAll(".param.invalid")) e.classList.remove("invalid");
}
