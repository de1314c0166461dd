// Knobs: a run as the playground and the compare panes send and show it:
// the conversation's roles, requests with the CSRF token, the metrics,
// the provider's labels of its answer, an error with advice, raw tokens.
"use strict";

import { formatNumber as fmt, measuredRate } from "./stream.js";

// ROLES are the roles a message of a conversation may have, in the order
// the editors list them.
export const ROLES = ["system", "developer", "user", "assistant", "tool"];

// contentText is a message's content as editor text: the text parts of a
// content array, one per line.
export function contentText(c) {
  if (c == null) return "";
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.filter((p) => p && p.type === "text").map((p) => p.text).join("\n");
  return JSON.stringify(c);
}

// jsonHeaders are the headers of a JSON request to Knobs, with the page's
// CSRF token.
export function jsonHeaders() {
  return { "Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content };
}

// postJSON posts body (if any) as JSON and asks for JSON back.
export function postJSON(url, body, init = {}) {
  return fetch(url, Object.assign({ method: "POST", headers: Object.assign(jsonHeaders(), { Accept: "application/json" }), body: body === undefined ? undefined : JSON.stringify(body) }, init));
}

// metricsList is a run's figures as a list: live while it streams ("…"
// for what is not known yet), then with its ending (done). details adds
// the token usage and the server's times; runId links the run's page.
export function metricsList(m, done, { details = false, runId = 0 } = {}) {
  const dl = document.createElement("dl");
  const add = (label, value) => {
    const div = document.createElement("div");
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = label;
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value;
    div.append(dt, dd);
    dl.append(div);
  };
  const waiting = done ? "—" : "…";
  add("First token", m.ttft_ms ? fmt(m.ttft_ms, m.ttft_ms < 100 ? 1 : 0) + " ms" : waiting);
  add("Tokens/s", m.tokens_per_sec ? measuredRate(m) : waiting);
  add("Tokens", fmt(m.tokens || 0));
  add("Total", fmt((m.total_ms || 0) / 1000, 2) + " s");
  if (!done) return dl;
  const u = done.usage;
  // Usage Knobs counted itself (the run stopped before the provider's
  // last chunk) says so: the provider's own figure may differ.
  const est = u && u.estimated ? " (estimated)" : "";
  if (details && u) {
    add("Prompt", fmt(u.prompt_tokens) + est);
    add("Completion", fmt(u.completion_tokens) + est);
    if (u.reasoning_tokens) add("Reasoning", fmt(u.reasoning_tokens));
    if (u.cached_tokens) add("Cached", fmt(u.cached_tokens));
  }
  const t = done.time_info;
  if (details && t) add("Server time", `queue ${fmt(t.queue_time * 1000, 1)} · prompt ${fmt(t.prompt_time * 1000, 1)} · completion ${fmt(t.completion_time * 1000, 1)} ms`);
  if (m.cost_usd) add("Cost", "$" + Number(m.cost_usd).toPrecision(3) + est);
  const fr = (done.finish_reasons || []).filter(Boolean);
  if (fr.length) add("Finish", [...new Set(fr)].join(", "));
  add("Status", done.status);
  if (runId) {
    const a = document.createElement("a");
    a.href = `/runs/${runId}`;
    a.textContent = `run ${runId}`;
    add("In history", a);
  }
  return dl;
}

// showAnswerLabels puts what the provider said about its answer r under
// the metrics in box: everything, as the run page does, or (compact, for
// a pane) the model that answered and the response id, the two that tell
// panes apart.
export function showAnswerLabels(box, r, compact = false) {
  let dl = box.querySelector(".answer-labels");
  if (!r) return dl && dl.remove();
  if (!dl) {
    dl = document.createElement("dl");
    dl.className = "answer-labels";
    box.append(dl);
  }
  dl.textContent = "";
  const add = (label, value, title = "") => {
    if (value === undefined || value === null || value === "") return;
    const div = document.createElement("div");
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = label;
    if (title) dt.title = title;
    dd.textContent = value;
    div.append(dt, dd);
    dl.append(div);
  };
  if (compact) {
    add("Model", r.model, "The model that answered, as the provider named it");
    add("Id", r.id, "The provider's id of this response");
    add("Tier", r.service_tier, "The service tier that served the request");
    return;
  }
  add("Model that answered", r.model);
  add("Response id", r.id);
  add("System fingerprint", r.system_fingerprint);
  add("Service tier", r.service_tier);
  if (r.created) add("Created", new Date(r.created * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC"));
  if (r.streamed === false) add("Delivery", "one JSON answer (not streamed)");
  for (const n of r.notes || []) add("Not read", n);
}

// ADVICE is what a user can do about each kind of error.
const ADVICE = {
  bad_key: "Check the API key in Settings: yours, or ask an admin about the team key.",
  permission: "The key works but may not use this model or endpoint.",
  unknown_model: "Pick a model from the list, or check the id.",
  validation: "The provider refused a parameter: fix it and run again.",
  rate_limit: "The provider's rate limit was reached.",
  out_of_credits: "The account behind the key is out of credits.",
  server: "The provider failed; trying again often works.",
  html_page: "Something between Knobs and the provider answered with a web page.",
  network: "The provider could not be reached.",
  timeout: "The provider sent nothing in time.",
  stream_error: "The provider reported an error in the middle of the answer.",
  truncated: "The stream ended before the answer was complete; what arrived is kept.",
  bad_response: "The provider answered with something that is not a stream.",
  limit: "Knobs stopped the run at one of its limits; what arrived is kept.",
  storage: "The answer is shown here but is not in history yet; Knobs keeps trying to store it.",
  no_endpoint: "The provider has no such endpoint: check its base URL, or try the other mode (chat or completion).",
};

// showRunError shows error d in box: its kind, the provider's own message
// (as text), the advice for its kind and, after a rate limit, when to retry.
export function showRunError(box, d) {
  hideRunError(box);
  box.hidden = false;
  const h = document.createElement("strong");
  h.textContent = (d.status ? `${d.status} · ` : "") + (d.kind || "error").replace(/_/g, " ");
  const msg = document.createElement("p");
  msg.className = "provider-message";
  msg.textContent = d.message || "";
  const advice = document.createElement("p");
  advice.className = "advice";
  advice.textContent = ADVICE[d.kind] || "";
  box.append(h, msg, advice);
  if (d.retry_after_s > 0) {
    let left = Math.ceil(d.retry_after_s);
    const t = document.createElement("p");
    t.className = "retry";
    box.append(t);
    const tick = () => {
      t.textContent = left > 0 ? `You can retry in ${left} s.` : "You can retry now.";
      if (left-- <= 0) clearInterval(box.countdown);
    };
    tick();
    box.countdown = setInterval(tick, 1000);
  }
}

// hideRunError empties the error box.
export function hideRunError(box) {
  clearInterval(box.countdown);
  box.hidden = true;
  box.textContent = "";
}

// rawTokens is the toggle that shows a choice's raw token ids.
export function rawTokens(ids) {
  const d = document.createElement("details");
  d.className = "raw-tokens";
  const s = document.createElement("summary");
  s.textContent = `tokens (${ids.length})`;
  const pre = document.createElement("pre");
  pre.className = "raw";
  pre.textContent = ids.join(" ");
  d.append(s, pre);
  return d;
}
