// Knobs history: picking runs to compare or export, and following a run
// that is still going on its page.
"use strict";

(() => {
  // ---------- the list: selection ----------
  const picks = Array.from(document.querySelectorAll("input.pick"));
  const compare = document.getElementById("h-compare");
  const exportLink = document.getElementById("h-export");
  const datasetLink = document.getElementById("h-dataset");
  const label = document.getElementById("h-selected");
  function updateSelection() {
    const ids = picks.filter((p) => p.checked).map((p) => p.value);
    label.textContent = ids.length ? `${ids.length} selected.` : "Select runs to compare two, export some or make a dataset of them.";
    const canCompare = ids.length === 2;
    compare.setAttribute("aria-disabled", String(!canCompare));
    compare.href = canCompare ? `/history/compare?a=${ids[1]}&b=${ids[0]}` : "/history/compare";
    exportLink.setAttribute("aria-disabled", String(ids.length === 0));
    exportLink.href = ids.length ? `/history/export?ids=${ids.join(",")}` : "/history/export";
    if (datasetLink) {
      datasetLink.setAttribute("aria-disabled", String(ids.length === 0));
      // Oldest first: the rows come in the order the runs were made.
      datasetLink.href = ids.length ? `/datasets/new?runs=${ids.slice().reverse().join(",")}` : "/datasets/new";
    }
  }
  if (compare && exportLink) {
    picks.forEach((p) => p.addEventListener("change", updateSelection));
    [compare, exportLink, datasetLink].filter(Boolean).forEach((a) =>
      a.addEventListener("click", (e) => {
        if (a.getAttribute("aria-disabled") === "true") e.preventDefault();
      }),
    );
    updateSelection();
  }

  // ---------- a run page while the run goes on ----------
  const page = document.querySelector(".run-page[data-live]");
  if (!page) return;
  const out = document.getElementById("run-choices");
  const status = document.getElementById("run-status");
  out.textContent = "";
  const live = document.createElement("pre");
  live.className = "content streaming";
  const text = document.createTextNode("");
  live.appendChild(text);
  out.appendChild(live);
  let pending = "";
  let frame = 0;
  const es = new EventSource(`/runs/${page.dataset.run}/events`);
  const delta = (d) => {
    if (d.choice !== 0) return;
    pending += d.text;
    if (!frame)
      frame = requestAnimationFrame(() => {
        frame = 0;
        text.appendData(pending);
        pending = "";
      });
  };
  es.addEventListener("delta", (e) => delta(JSON.parse(e.data)));
  // Text of several choices that arrived together, merged by the server.
  es.addEventListener("texts", (e) => {
    for (const p of JSON.parse(e.data).parts || []) if (p.event === "delta") delta(p);
  });
  let unstored = "";
  es.addEventListener("done", () => {
    es.close();
    // A run that could not be stored is still "running" in the database:
    // reloading would attach to it again, and again. Say so and stay.
    if (unstored) {
      status.textContent = "not stored";
      const note = document.createElement("p");
      note.className = "error";
      note.setAttribute("role", "alert");
      note.textContent = unstored;
      out.prepend(note);
      return;
    }
    // The run is stored before done is sent: the page now shows it whole.
    location.reload();
  });
  es.addEventListener("error", (e) => {
    // The connection's own "error" event has no data; ours does.
    if (e.data === undefined) {
      if (es.readyState === EventSource.CLOSED) status.textContent = "connection lost";
      return;
    }
    const d = JSON.parse(e.data);
    if (d.kind === "storage") unstored = d.message;
  });
  window.addEventListener("pagehide", () => es.close());
})();
