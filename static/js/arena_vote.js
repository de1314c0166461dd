// Knobs: an arena's voting page. It asks the voting link for a pair,
// shows the prompt as plain text and the two answers as the server
// rendered them from Markdown (sanitized, as a run's answer), sends the
// vote, then shows who wrote which answer and offers the next pair.
// A speed demo's pair streams: both answers grow side by side as plain
// text, and the vote opens once both are complete. Keys: 1 A, 2 B,
// 3 tie, 4 both bad, n next.
"use strict";

import { postJSON } from "./run.js";
import { SSEParser } from "./stream.js";

const root = document.getElementById("arena-vote");
const base = root.dataset.base;
const streaming = "streaming" in root.dataset;
const $ = (id) => document.getElementById(id);
const pairBox = $("av-pair");
const voteForm = $("av-vote");
const after = $("av-after");
const message = $("av-message");
const loading = $("av-loading");
const writeForm = $("av-write");
const voterName = $("av-voter");
// A speed demo's banner stays in view, under the sticky top bar, whose
// height changes with the width (its links wrap on a phone).
const banner = $("av-speed");
const topbar = document.querySelector(".topbar");
if (banner && topbar) {
  new ResizeObserver(() => root.style.setProperty("--topbar-h", `${topbar.offsetHeight}px`)).observe(topbar);
}
const choiceWords = { a: "A is better", b: "B is better", tie: "Tie", both_bad: "Both are bad" };

let pair = null; // the pair shown, until it is voted on
let busy = false;

// say shows a message in place of the pair; error marks it as a refusal.
function say(text, error = true) {
  message.textContent = text;
  message.classList.toggle("error", error);
  message.hidden = !text;
}

function fieldError(el, text) {
  el.textContent = text || "";
  el.hidden = !text;
}

// problem is the message of a refused call: the server's, else one by
// its status.
async function problem(r) {
  let body = {};
  try {
    body = await r.json();
  } catch {
    // not JSON: a proxy's page; the status says enough
  }
  const byStatus = {
    402: "This arena's budget for new answers is spent.",
    403: "You cannot vote here any more.",
    409: "There is no pair for you right now.",
    410: "Voting in this arena has ended. Thank you!",
    429: "Too many requests: wait a moment, then go on.",
  };
  return { text: body.error || byStatus[r.status] || `The server answered ${r.status}; try again.`, fields: body.fields || {} };
}

function showTally(votes) {
  if (!votes) return;
  $("av-tally").textContent = votes.max == null ? `You have voted ${votes.given} ${votes.given === 1 ? "time" : "times"}.` : `Vote ${Math.min(votes.given + 1, votes.max)} of ${votes.max}.`;
}

// setSide shows an answer: html, the server's sanitized rendering of its
// Markdown (the playground's renderer), or, while it streams (html null),
// its text as it is. The html is parsed in a template, away from the
// page, and put in whole: an answer is at most 64 KiB.
function setSide(side, text, html, name) {
  const box = $(`av-${side}`);
  box.classList.remove("av-writing");
  if (html == null) {
    box.classList.remove("md");
    box.textContent = text;
  } else {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    box.replaceChildren(tpl.content);
    box.classList.add("md");
  }
  $(`av-${side}-h`).textContent = name ? `${side.toUpperCase()} was ${name}` : side.toUpperCase();
}

// showPair shows a pair to vote on.
function showPair() {
  $("av-prompt").textContent = pair.prompt;
  setSide("a", pair.a.text, pair.a.html, "");
  setSide("b", pair.b.text, pair.b.html, "");
  showTally(pair.votes);
  voteForm.querySelectorAll("button").forEach((b) => (b.disabled = false));
}

// readStream follows a speed demo's pair as it is made: the prompt, then
// both answers as they are written, shown side by side with the vote
// closed, until the pair itself (returned) or a problem (shown; null).
async function readStream(r) {
  const text = { a: "", b: "" };
  let done = null;
  $("av-prompt").textContent = "";
  for (const side of ["a", "b"]) {
    setSide(side, "", null, "");
    $(`av-${side}`).classList.add("av-writing");
  }
  voteForm.querySelectorAll("button").forEach((b) => (b.disabled = true));
  pairBox.hidden = false;
  loading.hidden = true;
  const parser = new SSEParser((type, data) => {
    if (done) return;
    const d = JSON.parse(data);
    if (type === "prompt") {
      $("av-prompt").textContent = d.text;
    } else if (type === "text" && (d.side === "a" || d.side === "b")) {
      text[d.side] = text[d.side].slice(0, d.at) + d.text;
      setSide(d.side, text[d.side], null, "");
    } else if (type === "pair" || type === "problem") {
      done = { type, d };
    }
  });
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    parser.feed(decoder.decode(value, { stream: true }));
    if (done) break;
  }
  reader.cancel().catch(() => {});
  if (done && done.type === "pair") return done.d;
  pairBox.hidden = true;
  if (done) {
    const waiting = writeForm && done.d.status === 409;
    say(done.d.error, !waiting);
    if (waiting) $("av-prompt-text").focus();
  } else {
    say("The answers stopped streaming: reload the page to see your pair.");
  }
  return null;
}

// loadPair asks for the voter's pair (the one not voted on yet, or a new
// one) and shows it, or says why there is none.
async function loadPair() {
  if (busy) return;
  busy = true;
  pair = null;
  say("");
  pairBox.hidden = true;
  loading.hidden = false;
  try {
    const accept = streaming ? "text/event-stream, application/json" : "application/json";
    const r = await fetch(`${base}/pair`, { headers: { Accept: accept }, credentials: "same-origin" });
    if (!r.ok) {
      const p = await problem(r);
      // An open arena with no prompt of the voter's waits for one.
      const waiting = writeForm && r.status === 409;
      say(p.text, !waiting);
      if (waiting) $("av-prompt-text").focus();
      return;
    }
    $("av-side-a").classList.remove("chosen");
    $("av-side-b").classList.remove("chosen");
    voteForm.reset();
    fieldError($("av-vote-error"), "");
    voteForm.hidden = false;
    after.hidden = true;
    if (/^text\/event-stream/i.test(r.headers.get("Content-Type") || "")) {
      pair = await readStream(r);
      if (!pair) return;
    } else {
      pair = await r.json();
    }
    showPair();
    pairBox.hidden = false;
  } catch {
    pairBox.hidden = true;
    say("Knobs could not be reached: check your connection, then reload the page.");
  } finally {
    loading.hidden = true;
    busy = false;
  }
}

// vote sends the voter's choice on the pair shown, then reveals the names.
async function vote(choice) {
  if (busy || !pair) return;
  busy = true;
  const buttons = voteForm.querySelectorAll("button");
  buttons.forEach((b) => (b.disabled = true));
  fieldError($("av-vote-error"), "");
  const body = { pair_id: pair.pair_id, choice, reason: $("av-reason").value };
  if (voterName && voterName.value.trim()) body.name = voterName.value.trim();
  try {
    const r = await postJSON(`${base}/vote`, body, { credentials: "same-origin" });
    if (!r.ok) {
      const p = await problem(r);
      const detail = Object.values(p.fields).join(" ");
      fieldError($("av-vote-error"), detail ? `${p.text} ${detail}` : p.text);
      buttons.forEach((b) => (b.disabled = false));
      return;
    }
    const reveal = await r.json();
    setSide("a", reveal.a.text, reveal.a.html, reveal.a.name);
    setSide("b", reveal.b.text, reveal.b.html, reveal.b.name);
    if (choice === "a" || choice === "b") $(`av-side-${choice}`).classList.add("chosen");
    $("av-verdict").textContent = `You chose: ${choiceWords[choice]}. A was ${reveal.a.name}, B was ${reveal.b.name}.`;
    if (pair.votes) showTally({ given: pair.votes.given + 1, max: pair.votes.max });
    pair = null;
    voteForm.hidden = true;
    after.hidden = false;
    $("av-next").focus();
  } catch {
    fieldError($("av-vote-error"), "The vote could not be sent: check your connection, then try again.");
    buttons.forEach((b) => (b.disabled = false));
  } finally {
    busy = false;
  }
}

voteForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const choice = e.submitter && e.submitter.value;
  if (choice) vote(choice);
});
$("av-next").addEventListener("click", loadPair);

if (writeForm) {
  writeForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (busy) return;
    const text = $("av-prompt-text").value.trim();
    const err = $("av-prompt-error");
    if (!text) {
      fieldError(err, "Write a prompt first.");
      return;
    }
    fieldError(err, "");
    busy = true;
    const submit = writeForm.querySelector("button");
    submit.disabled = true;
    try {
      const r = await postJSON(`${base}/prompt`, { text }, { credentials: "same-origin" });
      if (!r.ok) {
        const p = await problem(r);
        fieldError(err, p.fields.text ? `${p.text} ${p.fields.text}` : p.text);
        return;
      }
      $("av-prompt-text").value = "";
    } catch {
      fieldError(err, "The prompt could not be sent: check your connection, then try again.");
      return;
    } finally {
      busy = false;
      submit.disabled = false;
    }
    loadPair();
  });
}

const keys = { 1: "a", 2: "b", 3: "tie", 4: "both_bad" };
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
  if (e.target.closest("input, textarea, select, [contenteditable]")) return;
  if (keys[e.key] && pair && !voteForm.hidden) {
    e.preventDefault();
    vote(keys[e.key]);
  } else if ((e.key === "n" || e.key === "N") && !after.hidden && !pairBox.hidden) {
    e.preventDefault();
    loadPair();
  }
});

// An open arena starts from the voter's own prompt, unless one of theirs
// is still waiting for a vote.
loadPair();
