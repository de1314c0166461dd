// Knobs API docs: Try it sends an operation from the /api page with the
// signed-in user's session (and the page's CSRF token, as every page
// script does) and shows the status and the answer.
"use strict";

import { jsonHeaders } from "./run.js";

// MAX_ANSWER bounds how much of an answer the page reads and shows: a
// live event stream could go on for long.
const MAX_ANSWER = 200_000;

// requestURL is the form's path with its path parameters filled in and
// its query parameters that have a value; null with the form's message
// when a path parameter is empty.
function requestURL(form) {
  let path = form.dataset.path;
  const query = new URLSearchParams();
  for (const input of form.querySelectorAll("input[data-in]")) {
    const v = input.value.trim();
    if (input.dataset.in === "path") {
      if (v === "") return null;
      path = path.replace(`{${input.dataset.name}}`, encodeURIComponent(v));
    } else if (input.dataset.in === "query" && v !== "") {
      query.append(input.dataset.name, v);
    }
  }
  const q = query.toString();
  return q ? `${path}?${q}` : path;
}

// readCapped reads a response's text, at most MAX_ANSWER characters.
async function readCapped(res) {
  if (!res.body) return { text: "", cut: false };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length >= MAX_ANSWER) {
      reader.cancel().catch(() => {});
      return { text: text.slice(0, MAX_ANSWER), cut: true };
    }
  }
  return { text: text + decoder.decode(), cut: false };
}

// shown is an answer's text as the page shows it: JSON indented.
function shown(text, type) {
  if (!type.startsWith("application/json") || text === "") return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

async function tryIt(form) {
  const status = form.querySelector("[data-try-status]");
  const answer = form.querySelector("[data-try-answer]");
  const button = form.querySelector('button[type="submit"]');
  const url = requestURL(form);
  if (url === null) {
    status.textContent = "Fill in the path's parameters first.";
    status.className = "api-try-status error";
    return;
  }
  const method = form.dataset.method;
  const headers = jsonHeaders();
  headers.Accept = "stream" in form.dataset ? "text/event-stream" : "application/json";
  for (const input of form.querySelectorAll('input[data-in="header"]')) {
    if (input.value.trim() !== "") headers[input.dataset.name] = input.value.trim();
  }
  const bodyInput = form.querySelector("[data-body]");
  const init = { method, headers, credentials: "same-origin" };
  if (bodyInput && method !== "GET" && method !== "HEAD") init.body = bodyInput.value;

  button.disabled = true;
  status.className = "api-try-status";
  status.textContent = `Sending ${method} ${url}…`;
  answer.hidden = true;
  try {
    const res = await fetch(url, init);
    const { text, cut } = await readCapped(res);
    status.className = `api-try-status ${res.ok ? "ok" : "error"}`;
    status.textContent = `${res.status} ${res.statusText}`.trim();
    answer.textContent = shown(text, res.headers.get("Content-Type") || "") + (cut ? "\n… (cut here)" : "");
    answer.hidden = text === "";
  } catch {
    status.className = "api-try-status error";
    status.textContent = "The request did not reach Knobs: check your connection and try again.";
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("submit", (e) => {
  const form = e.target.closest("form[data-try]");
  if (!form || e.defaultPrevented) return;
  e.preventDefault();
  tryIt(form);
});
