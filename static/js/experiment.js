// Knobs: an experiment's page. One EventSource on the experiment's events
// (the shared EventStream, which resumes after the last event it saw)
// fills the grid's cells as they end and keeps the progress current; a
// "reset" (events no longer kept) or the "end" reloads the results from
// the server, which also renders Markdown and groups repeats. Ratings are
// saved without leaving the page.
"use strict";

import { EventStream, formatNumber } from "./stream.js";

const root = document.getElementById("experiment");

function latencyText(ms) {
  return ms >= 1000 ? `${formatNumber(ms / 1000, 1)} s` : `${formatNumber(ms, 0)} ms`;
}

function durationText(ms) {
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  s %= 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

function money(usd) {
  if (!usd) return "$0";
  return usd < 0.0001 ? "< $0.0001" : `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

function setText(id, text) {
  const el = document.getElementById(id);
  if (el) el.textContent = text;
}

// showProgress puts a cell event's progress in the header.
function showProgress(p) {
  if (!p) return;
  setText("exp-done", String(p.done));
  setText("exp-total", String(p.total));
  setText("exp-failed", String(p.failed));
  const bar = document.getElementById("exp-bar");
  if (bar) {
    bar.max = Math.max(p.total, 1);
    bar.value = p.done;
  }
  if (p.cells_per_s) setText("exp-rate", `${formatNumber(p.cells_per_s, 1)} cells/s`);
  if (p.elapsed_ms) setText("exp-elapsed", durationText(p.elapsed_ms));
  setText("exp-remaining", p.remaining_ms ? durationText(p.remaining_ms) : "…");
  if (p.spent_usd) setText("exp-spent", money(p.spent_usd));
}

// badge is one grader's verdict as the server renders it.
function badge(g) {
  const grader = graders[g.grader] || { name: `grader ${g.grader + 1}` };
  const kind = g.error ? "error" : g.pass ? "pass" : "fail";
  const reason = `${g.error || g.reason || ""} (score ${Number(g.score || 0).toFixed(2)})`.trim();
  const span = document.createElement("span");
  span.className = `grade g-${kind}`;
  span.tabIndex = 0;
  span.title = reason;
  span.dataset.reason = reason;
  span.setAttribute("aria-label", `${grader.name}: ${kind}. ${reason}`);
  span.textContent = `${grader.name} ${kind === "pass" ? "✓" : kind === "fail" ? "✗" : "⚠"}`;
  return span;
}

// fillCell shows a cell that ended, when it is on this page of the grid.
function fillCell(c) {
  const el = root.querySelector(`[data-cell-id="${c.id}"]`);
  if (!el) return;
  el.className = `exp-run st-${c.status}`;
  el.dataset.filled = "1";
  const out = el.querySelector(".exp-out");
  out.querySelector(".exp-wait")?.remove();
  out.querySelector(".exp-md")?.remove();
  const err = out.querySelector(".exp-error");
  err.textContent = c.error || "";
  err.hidden = !c.error;
  const pre = out.querySelector(".exp-text");
  pre.textContent = c.output + (c.output_cut ? "…" : "");
  pre.hidden = !c.output;
  out.classList.toggle("clamped", c.output.split("\n").length > 6 || c.output.length > 400);
  el.querySelector(".exp-badges").replaceChildren(...(c.grades || []).map(badge));
  el.querySelector(".exp-latency").textContent = latencyText(c.latency_ms);
  el.querySelector(".exp-tokens").textContent = `${formatNumber(c.tokens)} tokens`;
  el.querySelector(".exp-cost").textContent = c.cost_usd ? money(c.cost_usd) : "—";
  if (c.run_id && !el.querySelector(".exp-runlink")) {
    const a = document.createElement("a");
    a.className = "exp-runlink";
    a.href = `/runs/${c.run_id}`;
    a.textContent = "run";
    el.querySelector(".exp-metrics").append(" · ", a);
  }
}

// reloadResults fetches this page again and puts its summary and grid in
// place of the ones shown.
async function reloadResults() {
  try {
    const res = await fetch(location.href, { headers: { Accept: "text/html" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    for (const id of ["exp-results", "exp-bar", "exp-done", "exp-total", "exp-failed", "exp-rate", "exp-elapsed", "exp-remaining", "exp-spent"]) {
      const fresh = doc.getElementById(id);
      const old = document.getElementById(id);
      if (fresh && old) old.replaceWith(document.adoptNode(fresh));
    }
  } catch (e) {
    console.error("knobs: reloading the results failed", e);
  }
}

function ended(data) {
  let e = {};
  try {
    e = JSON.parse(data);
  } catch {}
  const st = document.getElementById("exp-status");
  if (st && e.status) {
    st.textContent = e.status;
    st.className = `exp-status st-${e.status}`;
  }
  document.getElementById("exp-cancel")?.remove();
  root.dataset.live = "false";
  showProgress(e.progress);
  reloadResults().then(() => {
    root.dataset.ended = e.status || "done";
  });
}

const graders = root ? JSON.parse(root.dataset.graders || "[]") || [] : [];

if (root) {
  root.addEventListener("click", (e) => {
    const more = e.target.closest(".exp-more");
    if (more) {
      const out = more.closest(".exp-run").querySelector(".exp-out");
      const open = !out.classList.toggle("clamped");
      more.setAttribute("aria-expanded", String(open));
      more.textContent = open ? "Show less" : "Show all";
    }
    const raw = e.target.closest(".exp-raw-toggle");
    if (raw) {
      const run = raw.closest(".exp-run");
      const md = run.querySelector(".exp-md");
      const pre = run.querySelector(".exp-text");
      if (!md || !pre) return;
      const showRaw = raw.getAttribute("aria-pressed") !== "true";
      md.hidden = showRaw;
      pre.hidden = !showRaw;
      raw.setAttribute("aria-pressed", String(showRaw));
      raw.textContent = showRaw ? "Rendered" : "Raw";
    }
  });

  root.addEventListener("submit", async (e) => {
    const form = e.target.closest("form.exp-rate");
    if (!form) return;
    e.preventDefault();
    const data = new FormData(form);
    if (e.submitter && e.submitter.name) data.set(e.submitter.name, e.submitter.value);
    else data.set("thumbs", "keep");
    let status = form.querySelector(".exp-rate-status");
    if (!status) {
      status = document.createElement("span");
      status.className = "exp-rate-status muted";
      status.setAttribute("role", "status");
      form.append(status);
    }
    try {
      const res = await fetch(form.action, { method: "POST", body: new URLSearchParams(data), headers: { Accept: "application/json" } });
      const body = await res.json().catch(() => ({}));
      if (!res.ok) {
        status.textContent = body.error || "Not saved.";
        return;
      }
      form.querySelector('[name="current"]').value = body.thumbs || "";
      for (const b of form.querySelectorAll('button[name="thumbs"]')) {
        if (b.value !== "keep") b.setAttribute("aria-pressed", String(b.value === body.thumbs));
      }
      status.textContent = "Saved";
    } catch {
      status.textContent = "Not saved: Knobs cannot be reached.";
    }
  });

  if (root.dataset.live === "true") {
    const url = `/api/v1/experiments/${root.dataset.id}/events`;
    const stream = new EventStream({
      handlers: {
        cell: (data) => {
          const e = JSON.parse(data);
          showProgress(e.progress);
          if (e.cell) fillCell(e.cell);
        },
        reset: () => reloadResults(),
        end: ended,
      },
      final: "end",
      resume: (lastId) => `${url}?after=${encodeURIComponent(lastId || "0")}`,
      lost: () => setText("exp-remaining", "the live view stopped: reload the page"),
    });
    stream.listen(url);
  }
}
