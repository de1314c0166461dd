// Knobs compare: 2 to 6 panes on one shared conversation, every pane
// streaming over one connection; saved and shared comparisons replay.
//
// Each pane keeps its own history (its answers and the turns sent to it
// alone), so its next request is the shared conversation + its history.
// Model output is text (textContent); only the server's sanitized html
// field of a done event is inserted as markup.
"use strict";

import { EventStream, TextBlocks, Follower, FrameWrites, formatNumber as fmt, swapHTML, measuredRate } from "./stream.js";
import { readPrompt, writePrompt, promptShape, choiceLabel } from "./prompt.js";
import { wirePanel, ModelPicker } from "./controls.js";
import { readPanel, readPanelParts, applyPanel, showFieldError, clearFieldErrors } from "./panel.js";
import { ROLES, contentText, jsonHeaders, postJSON, metricsList, showAnswerLabels, showRunError, hideRunError, rawTokens } from "./run.js";

(() => {
  const root = document.getElementById("compare");
  if (!root) return;

  const $ = (sel, el = document) => el.querySelector(sel);
  const $$ = (sel, el = document) => Array.from(el.querySelectorAll(sel));
  const MIN = 2;
  const MAX = 6;
  const mode = root.dataset.mode;
  // A touch screen with no hover has no keys to hint at (emulated phones
  // report no coarse pointer, hence the touch points).
  if (navigator.maxTouchPoints > 0 && !matchMedia("(hover: hover)").matches) root.classList.add("touch");
  const readOnly = mode === "shared";
  const start = JSON.parse(root.dataset.start || "{}");

  const ui = {
    title: $("#cmp-title"),
    runBtn: $("#cmp-run"),
    stopBtn: $("#cmp-stop"),
    addBtn: $("#cmp-add"),
    replayBtn: $("#cmp-replay"),
    presentBtn: $("#cmp-present"),
    status: $("#cmp-status"),
    budget: $("#cmp-budget"),
    error: $("#cmp-error"),
    system: $("#cmp-system"),
    prompt: $("#cmp-prompt"),
    promptForm: $("#cmp-prompt-form"),
    promptError: $("#cmp-prompt-error"),
    chatBox: $("#cmp-chat-box"),
    promptBox: $("#cmp-prompt-box"),
    messages: $("#cmp-messages"),
    transcript: $("#cmp-transcript"),
    stage: $("#cmp-stage"),
    panes: $("#cmp-panes"),
    tpl: $("#cmp-pane-tpl"),
    summary: $("#cmp-summary"),
    summaryList: $("#cmp-summary-list"),
    cont: $("#cmp-continue"),
    contText: $("#cmp-continue-text"),
    contBtn: $("#cmp-continue-all"),
    share: $("#cmp-share"),
    presentTitle: $("#cmp-present-title"),
    presentPrompt: $("#cmp-present-prompt"),
  };

  const state = {
    panes: [], // pane objects, in page order
    runPanes: [], // the panes of the stream being read, by stream index
    stream: null,
    kind: "", // "run" (live group), "one" (one pane), "load", "replay"
    group: Number(root.dataset.group) || 0,
    base: [], // the shared conversation the panes' histories follow
    summaryHidden: false,
    titles: [], // each pane's title, by page order
    prompt: null, // the prompt of the last run or load, for presenter mode
  };
  let uid = 0;

  // endpoint is the mode every pane runs in: "chat" or "completion".
  let sharedEndpoint = "chat";
  let sharedPrompt = ""; // a completion comparison's prompt as the page opened with it
  function endpoint() {
    const r = $('input[name="cmp-endpoint"]:checked');
    return r ? r.value : sharedEndpoint;
  }

  // showMode shows the editor of the mode; a completion has no turns to continue.
  function showMode() {
    const completion = endpoint() === "completion";
    if (ui.chatBox) ui.chatBox.hidden = completion;
    if (ui.promptBox) ui.promptBox.hidden = !completion;
    if (completion && ui.cont) ui.cont.hidden = true;
    if (completion) for (const f of $$(".pane-continue", root)) f.hidden = true;
  }

  function say(text, bad) {
    ui.status.textContent = text || "";
    ui.status.classList.toggle("bad", !!bad);
  }

  // ---------- the shared conversation ----------

  function messageRow(msg) {
    const li = document.createElement("li");
    li.className = "message";
    const n = ++uid;
    const head = document.createElement("div");
    head.className = "msg-head";
    const rl = document.createElement("label");
    rl.htmlFor = `cm-role-${n}`;
    rl.textContent = "Role";
    const sel = document.createElement("select");
    sel.id = `cm-role-${n}`;
    sel.dataset.role = "";
    for (const r of ROLES) sel.append(new Option(r, r));
    sel.value = ROLES.includes(msg.role) ? msg.role : "user";
    // A tool message answers a call: it names the call's id.
    const tool = document.createElement("span");
    tool.className = "tool-id";
    const tl = document.createElement("label");
    tl.htmlFor = `cm-tcid-${n}`;
    tl.textContent = "tool_call_id";
    const tid = document.createElement("input");
    tid.id = `cm-tcid-${n}`;
    tid.dataset.toolCallId = "";
    tid.spellcheck = false;
    tid.size = 18;
    tid.value = msg.tool_call_id || "";
    tool.append(tl, tid);
    const showTool = () => (tool.hidden = sel.value !== "tool");
    sel.addEventListener("change", showTool);
    showTool();
    const grow = document.createElement("span");
    grow.className = "grow";
    const del = document.createElement("button");
    del.type = "button";
    del.className = "icon danger";
    del.textContent = "✕";
    del.title = "Delete message";
    del.setAttribute("aria-label", "Delete message");
    del.addEventListener("click", () => li.remove());
    head.append(rl, sel, tool, grow, del);
    const cl = document.createElement("label");
    cl.htmlFor = `cm-content-${n}`;
    cl.className = "sr-label";
    cl.textContent = "Message content";
    const ta = document.createElement("textarea");
    ta.id = `cm-content-${n}`;
    ta.rows = 2;
    ta.dataset.content = "";
    ta.value = contentText(msg.content);
    li.append(head, cl, ta);
    return li;
  }

  function readConversation() {
    const out = [];
    if (ui.system && ui.system.value.trim() !== "") out.push({ role: "system", content: ui.system.value });
    for (const li of $$(".message", ui.messages)) {
      const m = { role: $("[data-role]", li).value, content: $("[data-content]", li).value };
      if (m.role === "tool") m.tool_call_id = $("[data-tool-call-id]", li).value.trim();
      out.push(m);
    }
    return out;
  }

  function fillConversation(messages) {
    if (readOnly) {
      ui.transcript.textContent = "";
      for (const m of messages) ui.transcript.append(turnItem(m.role, contentText(m.content)));
      if (!messages.length) ui.transcript.append(turnItem("", "No messages."));
      return;
    }
    let list = messages.slice();
    if (list.length && list[0].role === "system") {
      ui.system.value = contentText(list[0].content);
      list = list.slice(1);
    } else ui.system.value = "";
    ui.messages.textContent = "";
    for (const m of list) ui.messages.append(messageRow(m));
    if (!list.length) ui.messages.append(messageRow({ role: "user", content: "" }));
  }

  function turnItem(role, text) {
    const li = document.createElement("li");
    li.className = "turn";
    const r = document.createElement("span");
    r.className = "turn-role";
    r.textContent = role;
    const t = document.createElement("div");
    t.className = "turn-text";
    t.textContent = text;
    li.append(r, t);
    return li;
  }

  if (!readOnly) {
    for (const box of [ui.chatBox, ui.promptBox])
      box.addEventListener("input", () => {
        state.prompt = null;
      });
    $$("[data-add-message]").forEach((b) =>
      b.addEventListener("click", () => {
        const row = messageRow({ role: b.dataset.addMessage, content: "" });
        ui.messages.append(row);
        $("textarea", row).focus();
      }),
    );
  }

  // toMessages turns a spec's body into chat messages (a completion
  // prompt becomes one user message).
  function toMessages(body) {
    if (Array.isArray(body.messages)) return body.messages;
    // An array prompt becomes its JSON text: read as message parts, its
    // strings would vanish.
    if (body.prompt != null) return [{ role: "user", content: typeof body.prompt === "string" ? body.prompt : JSON.stringify(body.prompt) }];
    return [];
  }

  // commonPrefix is the messages every list starts with.
  function commonPrefix(lists) {
    if (!lists.length) return [];
    const out = [];
    for (let i = 0; ; i++) {
      const m = lists[0][i];
      if (!m || !lists.every((l) => l[i] && JSON.stringify(l[i]) === JSON.stringify(m))) return out;
      out.push(m);
    }
  }

  // ---------- panes ----------

  function addPane(spec) {
    if (state.panes.length >= MAX) return null;
    const n = ++uid;
    const el = ui.tpl.content.firstElementChild.cloneNode(true);
    // The template's controls are named by data-id: give each pane its own ids.
    for (const c of $$("[data-id]", el)) c.id = `cp${n}-${c.dataset.id}`;
    for (const l of $$("label[data-for]", el)) l.htmlFor = `cp${n}-${l.dataset.for}`;
    const p = {
      n,
      el,
      provider: $("[data-provider]", el),
      model: $("[data-model]", el),
      panelBox: $("[data-panel]", el),
      output: $("[data-output]", el),
      metrics: $("[data-metrics]", el),
      progress: $(".pane-progress", el),
      error: $("[data-error]", el),
      stopBtn: $(".pane-stop", el),
      specText: $(".pane-spec", el),
      sub: $(".pane-sub", el),
      raceBar: $(".race-bar", el),
      raceRate: $(".race-rate", el),
      rate: 0,
      panelLoaded: false,
      history: [],
      specHistory: [],
      spec: spec || { provider: "sim", endpoint: "chat", body: { model: "sim-fast" } },
      run: null,
      panelSeq: 0,
    };
    p.follow = new Follower(p.output);
    ui.panes.append(el);
    state.panes.push(p);
    if (!readOnly) wirePane(p);
    setPaneSpec(p, p.spec);
    renumber();
    return p;
  }

  function wirePane(p) {
    p.picker = new ModelPicker(p.model);
    wirePanel(p.panelBox);
    p.provider.addEventListener("change", () => {
      loadModels(p);
      loadPanel(p);
      renumber();
    });
    // A parameter changed: the titles say what sets the panes apart.
    p.panelBox.addEventListener("input", retitle);
    p.panelBox.addEventListener("change", retitle);
    let t = 0;
    p.model.addEventListener("input", () => {
      clearTimeout(t);
      t = setTimeout(() => loadPanel(p), 400);
      renumber();
    });
    p.model.addEventListener("change", () => {
      clearTimeout(t);
      loadPanel(p);
      renumber();
    });
    $(".pane-remove", p.el).addEventListener("click", () => removePane(p));
    p.stopBtn.addEventListener("click", () => stopPane(p));
    const form = $(".pane-continue", p.el);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const ta = $("textarea", form);
      if (ta.value.trim() === "") return;
      continueOne(p, ta.value).then((ok) => {
        if (ok) ta.value = "";
      });
    });
  }

  // setPaneSpec shows spec in pane p: its provider, model and parameters.
  function setPaneSpec(p, spec) {
    const body = spec.body || {};
    p.spec = spec;
    if (readOnly) {
      const params = Object.entries(body)
        .filter(([k]) => !["model", "messages", "prompt", "stream"].includes(k))
        .map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`);
      p.specText.textContent = [spec.provider, body.model].concat(params).filter(Boolean).join(" · ");
      return;
    }
    if ([...p.provider.options].some((o) => o.value === spec.provider)) p.provider.value = spec.provider;
    p.model.value = body.model || "";
    loadModels(p);
    loadPanel(p, body);
  }

  function removePane(p) {
    if (state.stream || state.panes.length <= MIN) return;
    p.el.remove();
    state.panes = state.panes.filter((x) => x !== p);
    renumber();
  }

  function modelOf(p) {
    return readOnly ? (p.spec.body && p.spec.body.model) || "" : p.model.value.trim();
  }

  function label(p) {
    const i = state.panes.indexOf(p);
    return state.titles[i] || `Pane ${i + 1}`;
  }

  // ---------- pane titles ----------

  const NOT_PARAMS = ["model", "messages", "prompt", "stream", "stream_options"];

  // paneFacts is what pane p runs: its provider, model and parameters.
  function paneFacts(p) {
    if (readOnly) {
      const body = p.spec.body || {};
      return { provider: p.spec.provider || "", providerName: p.spec.provider || "", model: body.model || "", params: paramsOf(body) };
    }
    const opt = p.provider.selectedOptions[0];
    return {
      provider: p.provider.value,
      providerName: opt ? opt.textContent : p.provider.value,
      model: p.model.value.trim(),
      // Until its panel is in, a pane's parameters are the ones it was given.
      params: paramsOf(p.panelLoaded ? readPanel(p.panelBox, {}) : p.spec.body || {}),
    };
  }

  function paramsOf(body) {
    const out = {};
    for (const [k, v] of Object.entries(body || {})) if (!NOT_PARAMS.includes(k) && v !== undefined && v !== null) out[k] = v;
    return out;
  }

  function valueText(v) {
    const t = typeof v === "object" ? JSON.stringify(v) : String(v);
    return t.length > 24 ? t.slice(0, 23) + "…" : t;
  }

  // paneTitles names each pane by what sets it apart from the others (a
  // swept temperature, the model, the provider), so that a sweep does not
  // read "Pane 3 · sim-slow" four times; panes alike are numbered.
  function paneTitles(facts) {
    const differs = (f) => new Set(facts.map(f)).size > 1;
    const keys = [...new Set(facts.flatMap((f) => Object.keys(f.params)))]
      .sort()
      .filter((k) => differs((f) => (k in f.params ? JSON.stringify(f.params[k]) : "")));
    const byProvider = differs((f) => f.provider);
    const byModel = differs((f) => f.model);
    const titles = facts.map((f, i) => {
      const parts = [];
      if (byProvider) parts.push(f.providerName);
      if (byModel) parts.push(f.model || "no model");
      for (const k of keys) parts.push(`${k} ${k in f.params ? valueText(f.params[k]) : "default"}`);
      if (!parts.length) return `Pane ${i + 1}` + (f.model ? ` · ${f.model}` : "");
      return (parts.length > 3 ? parts.slice(0, 3).concat(`+${parts.length - 3} more`) : parts).join(" · ");
    });
    // Two panes alike among panes that differ: their numbers tell them apart.
    return titles.map((t, i) => (titles.indexOf(t) !== titles.lastIndexOf(t) ? `${t} · pane ${i + 1}` : t));
  }

  let titleFrame = 0;
  function retitle() {
    if (!titleFrame)
      titleFrame = requestAnimationFrame(() => {
        titleFrame = 0;
        renumber();
      });
  }

  function renumber() {
    const facts = state.panes.map(paneFacts);
    state.titles = paneTitles(facts);
    state.panes.forEach((p, i) => {
      $(".pane-label", p.el).textContent = state.titles[i];
      p.sub.textContent = [facts[i].providerName, facts[i].model].filter(Boolean).join(" · ");
      p.el.setAttribute("aria-label", state.titles[i]);
      const rm = $(".pane-remove", p.el);
      if (rm) rm.disabled = state.panes.length <= MIN || !!state.stream;
    });
    if (ui.addBtn) ui.addBtn.disabled = state.panes.length >= MAX || !!state.stream;
    ui.panes.dataset.count = String(state.panes.length);
    // The pickers name the panes by their titles; the choice made stays
    // (the first pane when there was none, so a picker is never blank).
    for (const sel of $$("[data-pane-picker]")) {
      const keep = sel.value;
      sel.replaceChildren(...state.titles.map((t, i) => new Option(t, String(i))));
      sel.value = keep !== "" && Number(keep) < state.panes.length ? keep : "0";
    }
  }

  // modelLists keeps each provider's model list for the page's life: the
  // panes of one provider share one request.
  const modelLists = new Map();
  function modelList(provider) {
    if (!modelLists.has(provider)) {
      const list = fetch(`/playground/models?provider=${encodeURIComponent(provider)}`, { headers: { Accept: "application/json" } })
        .then((res) => (res.ok ? res.json() : {}))
        .then((data) => data.models || [])
        .catch(() => null);
      modelLists.set(provider, list);
      list.then((l) => l || modelLists.delete(provider)); // a failure is asked again next time
    }
    return modelLists.get(provider);
  }

  async function loadModels(p) {
    const models = await modelList(p.provider.value);
    if (!models) return;
    p.picker.setModels(models);
  }

  // loadPanel fetches the parameter panel for the pane's provider and
  // model, scopes its ids to the pane, and fills it with body (or with
  // what the pane's panel held).
  async function loadPanel(p, body) {
    const keep = body ? { fields: body } : readPanelParts(p.panelBox, {});
    const seq = ++p.panelSeq;
    p.el.dataset.busy = "1";
    const q = new URLSearchParams({ provider: p.provider.value, endpoint: endpoint(), model: p.model.value.trim() });
    const res = await fetch(`/playground/panel?${q}`).catch(() => null);
    const html = res && res.ok ? await res.text().catch(() => null) : null;
    if (seq !== p.panelSeq) return;
    // Busy until the new panel is in: what is typed into the old one
    // meanwhile would be lost.
    delete p.el.dataset.busy;
    if (html === null) {
      paneError(p, "general", "The parameters for this provider could not be loaded.");
      return;
    }
    const tpl = document.createElement("template");
    tpl.innerHTML = html; // Knobs' own panel markup
    const prefix = `cp${p.n}-`;
    for (const el of $$("[id]", tpl.content)) el.id = prefix + el.id;
    for (const el of $$("label[for]", tpl.content)) el.htmlFor = prefix + el.htmlFor;
    for (const attr of ["aria-labelledby", "aria-describedby"]) {
      for (const el of $$(`[${attr}]`, tpl.content)) el.setAttribute(attr, el.getAttribute(attr).split(/\s+/).map((x) => prefix + x).join(" "));
    }
    $$("h2", tpl.content).forEach((h) => h.remove()); // the pane's summary names it
    p.panelBox.replaceChildren(tpl.content);
    applyPanel(p.panelBox, keep.fields, keep.extra);
    p.panelLoaded = true;
    renumber();
  }

  // paneBody is pane p's request body without messages.
  function paneBody(p, errors) {
    return Object.assign({ model: p.model.value.trim() }, readPanel(p.panelBox, errors));
  }

  // paneError shows a field's message in pane p: beside the model box or
  // the parameter, else under the pane's editor.
  function paneError(p, field, msg) {
    const model = field === "model" ? $('[data-pane-error="model"]', p.el) : null;
    if (model) {
      model.textContent = msg;
      model.hidden = false;
      return;
    }
    const el = field !== "general" && p.panelBox ? showFieldError(p.panelBox, field, msg) : null;
    if (el) {
      if (el.closest(".param")) $(".pane-params", p.el).open = true;
      return;
    }
    const general = $('[data-pane-error="general"]', p.el);
    if (!general) return;
    general.textContent = (general.hidden ? "" : general.textContent + "\n") + (field === "general" ? msg : `${field}: ${msg}`);
    general.hidden = false;
  }

  function clearPaneErrors() {
    for (const p of state.panes) clearFieldErrors(p.el);
  }

  // ---------- running ----------

  // runAll starts every pane: fresh from the shared conversation, or,
  // with turn, continuing each pane's own history with the user's turn.
  // The POST answers the comparison's event stream itself; a server that
  // answers JSON gets an EventSource on the events URL it names.
  async function runAll(turn) {
    if (state.stream || readOnly) return false;
    const ep = endpoint();
    if (ep === "completion" && turn !== undefined) return false;
    clearPaneErrors();
    say("");
    if (ui.error) hideRunError(ui.error);
    const base = turn === undefined ? readConversation() : state.base;
    const errors = state.panes.map(() => ({}));
    // The shared prompt goes to every pane as written: an array stays an
    // array (each pane gets its own copy of it).
    const prompt = ep === "completion" ? readPrompt(ui.prompt.value, ui.promptForm.value) : {};
    const panes = state.panes.map((p, i) => {
      const history = turn === undefined ? [] : p.history.concat({ role: "user", content: turn });
      const body = paneBody(p, errors[i]);
      if (ep === "completion") body.prompt = structuredClone(prompt.value);
      else body.messages = base.concat(history);
      return { provider: p.provider.value, endpoint: ep, body, history };
    });
    showPromptError(prompt.error);
    let bad = !!prompt.error;
    errors.forEach((e, i) => Object.entries(e).forEach(([f, m]) => ((bad = true), paneError(state.panes[i], f, m))));
    if (bad) {
      say("Nothing was sent: fix the panes marked.", true);
      return false;
    }
    const stream = newStream("run", (last) => `/groups/${state.group}/events` + (last ? `?after=${encodeURIComponent(last)}` : ""));
    const request = { title: ui.title ? ui.title.value.trim() : "", panes: panes.map(({ provider, endpoint, body }) => ({ provider, endpoint, body })) };
    let res;
    try {
      res = await stream.post("/compare/runs", JSON.stringify(request), jsonHeaders());
    } catch (e) {
      closeStream();
      say("Knobs could not be reached: " + e.message, true);
      return false;
    }
    showBudget(res);
    let group, runs, events;
    if (EventStream.isStream(res)) {
      group = Number(res.headers.get("X-Knobs-Group"));
      // Each pane's run id, for its Stop button; without it the pane
      // stops with the others.
      runs = (res.headers.get("X-Knobs-Runs") || "").split(",").map(Number);
    } else {
      const data = await res.json().catch(() => ({}));
      if (!res.ok) {
        closeStream();
        for (const ip of data.panes || []) {
          const p = state.panes[ip.index];
          if (p) for (const [f, m] of Object.entries(ip.fields || {})) paneError(p, f, m);
        }
        // A monthly budget refuses the whole comparison before anything
        // is sent: its message says which cap, what was spent and when
        // it resets, shown as the playground shows it.
        if (res.status === 402 && ui.error) showRunError(ui.error, { kind: "monthly_budget", message: data.error });
        else say(data.error || `Knobs answered ${res.status}.`, true);
        return false;
      }
      ({ group, runs, events } = data);
    }
    state.base = base;
    state.group = group;
    state.prompt = turn !== undefined ? turn : ep === "completion" ? ui.prompt.value : lastUser(base);
    showPrompt();
    state.runPanes = state.panes.slice();
    state.panes.forEach((p, i) => {
      p.history = panes[i].history;
      p.run = { id: runs[i] || 0, body: panes[i].body };
      startOutput(p, turn === undefined, turn, panes[i].body);
    });
    hideSummary();
    setRunning(true);
    if (events) stream.listen(events);
    else stream.read(res);
    return true;
  }

  // showBudget shows the warning of a monthly budget a run's answer
  // carries, as the playground does; an answer without one leaves the
  // banner as it is.
  function showBudget(res) {
    const warning = res.headers.get("X-Knobs-Budget-Warning");
    if (!warning || !ui.budget) return;
    ui.budget.textContent = warning;
    ui.budget.hidden = false;
  }

  function showPromptError(msg) {
    if (!ui.promptError) return;
    ui.promptError.textContent = msg || "";
    ui.promptError.hidden = !msg;
  }

  // continueOne sends turn to pane p alone, as one run.
  async function continueOne(p, turn) {
    if (state.stream || endpoint() !== "chat") return false;
    clearPaneErrors();
    const errors = {};
    const body = paneBody(p, errors);
    const history = p.history.concat({ role: "user", content: turn });
    body.messages = state.base.concat(history);
    Object.entries(errors).forEach(([f, m]) => paneError(p, f, m));
    if (Object.keys(errors).length) return false;
    let id = 0;
    const stream = newStream("one", (last) => `/runs/${id}/events?after=${encodeURIComponent(last || "0")}`);
    const res = await stream.post("/runs", JSON.stringify({ provider: p.provider.value, endpoint: "chat", body }), jsonHeaders()).catch(() => null);
    if (!res) {
      closeStream();
      paneError(p, "general", "Knobs could not be reached.");
      return false;
    }
    let events = "";
    showBudget(res);
    if (EventStream.isStream(res)) id = Number(res.headers.get("X-Knobs-Run"));
    else {
      const data = await res.json().catch(() => ({}));
      if (!res.ok) {
        closeStream();
        for (const [f, m] of Object.entries(data.fields || {})) paneError(p, f, m);
        if (res.status === 402) showRunError(p.error, { kind: "monthly_budget", message: data.error });
        else if (!data.fields) paneError(p, "general", data.error || `Knobs answered ${res.status}.`);
        return false;
      }
      id = data.id;
      events = data.events;
    }
    p.history = history;
    p.run = { id, body };
    state.prompt = turn;
    showPrompt();
    state.runPanes = [p];
    startOutput(p, false, turn, body);
    setRunning(true);
    if (events) stream.listen(events);
    else stream.read(res);
    return true;
  }

  // startOutput prepares pane p for a stream: a fresh output, or one more
  // turn under the previous ones.
  function startOutput(p, fresh, turn, body) {
    for (const c of p.choices || []) if (c.cancelSwap) c.cancelSwap(); // a previous answer still going in
    if (fresh) {
      p.output.textContent = "";
      for (const m of p.specHistory) p.output.append(turnBlock(m.role, contentText(m.content)));
    }
    $$(".empty", p.output).forEach((e) => e.remove());
    if (turn !== undefined && turn !== null) p.output.append(turnBlock("user", turn));
    hideRunError(p.error);
    p.metrics.textContent = "";
    $(".pane-badges", p.el).textContent = "";
    p.choices = [];
    p.pendingMetrics = null;
    p.answer = null;
    p.rate = 0;
    p.raceBar.style.width = "0";
    p.raceRate.textContent = "…";
    p.shape = promptShape(endpoint(), body);
    p.done = false;
    p.max = body ? body.max_completion_tokens || body.max_tokens || 0 : 0;
    p.progress.hidden = false;
    if (p.max) {
      p.progress.max = p.max;
      p.progress.value = 0;
    } else p.progress.removeAttribute("value");
    if (p.stopBtn) p.stopBtn.disabled = true; // setRunning enables it for a live run
    p.el.classList.add("running");
  }

  function turnBlock(role, text) {
    const d = document.createElement("div");
    d.className = "turn turn-" + role;
    const r = document.createElement("span");
    r.className = "turn-role";
    r.textContent = role;
    const t = document.createElement("div");
    t.className = "turn-text";
    t.textContent = text;
    d.append(r, t);
    return d;
  }

  // choice returns choice i of pane p; its elements are made in the next
  // frame's flush, with every other write.
  function choice(p, i) {
    while (p.choices.length <= i) {
      // The first choice seen is not choice 0: say which it is.
      const mark = p.choices.length === 0 && i > 0 ? String(i) : "";
      p.choices.push({ index: p.choices.length, el: null, mark, text: "", pending: "", pendingThink: "", showThink: false, tools: {}, tokens: [] });
    }
    return p.choices[i];
  }

  function makeChoice(p, c) {
    const el = document.createElement("article");
    el.className = "choice";
    const think = document.createElement("details");
    think.className = "thinking";
    think.hidden = true;
    const sum = document.createElement("summary");
    sum.textContent = "Reasoning";
    const thinkText = document.createElement("div");
    thinkText.className = "thinking-text";
    think.append(sum, thinkText);
    const tools = document.createElement("div");
    tools.className = "tool-calls";
    const content = document.createElement("div");
    content.className = "content streaming";
    el.append(think, tools, content);
    // Several prompts: the provider numbers the choices on across them,
    // so each says which prompt it answers.
    if (p.shape && p.shape.prompts > 1) {
      const head = document.createElement("header");
      head.className = "choice-head";
      const idx = document.createElement("span");
      idx.className = "choice-index";
      idx.textContent = choiceLabel(p.shape, c.index);
      head.append(idx);
      el.prepend(head);
    }
    if (c.mark) el.dataset.choice = c.mark;
    p.output.append(el);
    Object.assign(c, { el, think, content, blocks: new TextBlocks(content), thinkBlocks: new TextBlocks(thinkText) });
  }

  // flush writes what arrived since the last frame, then the writes
  // queued with later: every DOM write of a stream happens there, one
  // batch per frame. Every pane's scroll position is read before any pane
  // is written (a read after a write forces a layout); a pane the reader
  // scrolled up in keeps its place.
  const writes = new FrameWrites(flush);
  const later = (fn) => writes.later(fn);
  function flush() {
    const panes = state.runPanes.filter((p) => p.choices);
    for (const p of panes) p.follow.read();
    for (const p of panes) p.follow.scroll();
    for (const p of panes) {
      for (const c of p.choices) {
        if (!c.el) makeChoice(p, c);
        if (c.pending) {
          c.blocks.append(c.pending);
          c.pending = "";
        }
        if (c.pendingThink) {
          c.think.hidden = false;
          c.thinkBlocks.append(c.pendingThink);
          c.pendingThink = "";
        }
      }
      if (p.pendingMetrics) {
        showMetrics(p, p.pendingMetrics, null);
        p.pendingMetrics = null;
      }
    }
  }

  function showMetrics(p, m, done) {
    p.metrics.replaceChildren(metricsList(m, done));
    showAnswerLabels(p.metrics, p.answer, true);
    if (p.max) p.progress.value = Math.min(m.tokens || 0, p.max);
    const rate = measuredRate(m);
    p.rate = rate === "—" ? 0 : m.tokens_per_sec;
    p.raceRate.textContent = rate === "—" ? (done ? "—" : "…") : `${rate} tokens/s`;
    showRace();
  }

  // showRace draws the speed race: each pane's tokens/s as a bar against
  // the fastest pane's, live while the panes stream.
  function showRace() {
    const top = Math.max(0, ...state.runPanes.map((p) => p.rate || 0));
    for (const p of state.runPanes) {
      p.raceBar.style.width = top ? `${((p.rate || 0) / top) * 100}%` : "0";
      p.raceBar.classList.toggle("leading", top > 0 && p.rate === top);
    }
  }

  // finishPane shows a pane's ending; it runs in a frame's flush, after
  // the pane's last text was written.
  function finishPane(p, d) {
    p.done = true;
    p.el.classList.remove("running");
    if (p.stopBtn) p.stopBtn.disabled = true;
    if (d.metrics) showMetrics(p, d.metrics, d);
    if (p.max) p.progress.value = Math.min(p.progress.value, p.max);
    else {
      p.progress.max = 1;
      p.progress.value = 1;
    }
    p.choices.forEach((c) => {
      if (!c.el) makeChoice(p, c);
      c.content.className = "content plain"; // the streamed blocks are the text, until rendered
      if (c.think.hidden === false) c.think.open = false;
      if (c.tokens.length) c.el.append(rawTokens(c.tokens));
    });
    if (d.status === "cancelled") {
      const note = document.createElement("p");
      note.className = "muted";
      note.textContent = "Stopped. The partial answer is kept in history.";
      p.output.append(note);
    }
    // An answer cut by max tokens is not the model's whole answer: on the
    // stage too, people should know.
    if ((d.finish_reasons || []).includes("length")) {
      const b = document.createElement("span");
      b.className = "badge warn cutoff";
      b.textContent = "cut off at max tokens";
      $(".pane-badges", p.el).prepend(b);
    }
    // A finished answer is read from its start: the pane goes back to it,
    // unless the reader had scrolled elsewhere; and again once the
    // rendered answer (taller or shorter than the streamed text) is in.
    p.atStart = p.follow.following;
    if (p.atStart) {
      backToStart(p);
      p.follow.following = false;
      p.follow.top = -1;
    }
    const first = p.choices[0];
    if (first && (first.text || Object.keys(first.tools).length)) p.history.push({ role: "assistant", content: first.text });
    if (state.kind === "one") {
      setRunning(false); // the stream stays open for the rendered answer
      showContinue();
    }
  }

  // backToStart scrolls a pane's output to the start of its answer.
  function backToStart(p) {
    const start = p.choices[0] && p.choices[0].el;
    if (!start || p.output.scrollHeight <= p.output.clientHeight) return;
    p.output.scrollTop += start.getBoundingClientRect().top - p.output.getBoundingClientRect().top;
  }

  // renderPane swaps each answer's rendered HTML in for its streamed text;
  // it follows the pane's done.
  function renderPane(p, d) {
    p.choices.forEach((c, i) => {
      if (!c.el) makeChoice(p, c);
      const html = d.html ? d.html[i] : "";
      if (!html) return;
      if (c.cancelSwap) c.cancelSwap();
      // The HTML goes in over a few frames; the streamed text stays
      // (pre-wrap) until it is all in.
      c.cancelSwap = swapHTML(c.content, html, () => {
        c.cancelSwap = null;
        c.content.className = "content md"; // sanitized on the server
        if (i === 0 && p.atStart) backToStart(p);
      });
    });
    if (state.kind === "one") closeStream();
  }

  // newStream makes the stream of kind ("run": a live comparison, "one":
  // one pane's run, "load" or "replay": a stored comparison) and shows the
  // page running. resume gives the URL that continues after an event id,
  // or is null (a replay reconnects on its own). A delta may carry many
  // tokens (the server merges them): nothing here counts events.
  function newStream(kind, resume) {
    const paneOf = (d) => (kind === "one" ? state.runPanes[0] : state.runPanes[d.pane]);
    const on = (fn) => (data) => {
      if (state.stream !== stream) return;
      const d = typeof data === "string" ? JSON.parse(data) : data; // a part of a texts event comes parsed
      const p = paneOf(d);
      if (!p) return;
      if (!p.choices) startOutput(p, true, null, null);
      fn(p, d);
      writes.schedule();
    };
    const stream = new EventStream({
      final: kind === "one" ? "rendered" : "group_done",
      settles: kind === "one" ? ["done"] : [],
      resume,
      lost: () => {
        if (state.stream !== stream) return;
        closeStream();
        say("The connection to Knobs was lost; what arrived is kept in history.", true);
      },
      handlers: {
        request: on((p, d) => {
          // The body as sent says how the choices split across prompts;
          // before the first choice is made.
          if (d && d.body && Array.isArray(d.body.prompt)) p.shape = promptShape("completion", d.body);
          if (p.max || !d || !d.body) return;
          p.max = d.body.max_completion_tokens || d.body.max_tokens || 0;
          if (p.max)
            later(() => {
              p.progress.max = p.max;
              p.progress.value = 0;
            });
        }),
        delta: on((p, d) => {
          const c = choice(p, d.choice || 0);
          c.text += d.text;
          c.pending += d.text;
        }),
        reasoning: on((p, d) => {
          choice(p, d.choice || 0).pendingThink += d.text;
        }),
        tool_call: on((p, d) => {
          const c = choice(p, d.choice || 0);
          const call = d.call || {};
          later(() => {
            let pre = c.tools[call.index];
            if (!pre) {
              pre = document.createElement("pre");
              pre.className = "tool-card";
              $(".tool-calls", c.el).append(pre);
              c.tools[call.index] = pre;
            }
            pre.textContent = `🔧 ${call.name || "…"} ${call.arguments || ""}`;
          });
        }),
        metrics: on((p, d) => (p.pendingMetrics = d)),
        // Raw token ids (return_raw_tokens): kept per choice, shown at the end.
        tokens: on((p, d) => choice(p, d.choice || 0).tokens.push(...(d.tokens || []))),
        response: on((p, d) => {
          p.answer = d;
          later(() => showAnswerLabels(p.metrics, p.answer, true));
        }),
        error: on((p, d) => later(() => showRunError(p.error, d))),
        done: on((p, d) => later(() => finishPane(p, d))),
        rendered: on((p, d) => later(() => renderPane(p, d))),
        group_done: (data) => {
          if (state.stream !== stream) return;
          const d = JSON.parse(data);
          later(() => groupDone(d));
        },
      },
    });
    state.stream = stream;
    state.kind = kind;
    writes.clear();
    return stream;
  }

  function closeStream() {
    if (state.stream) state.stream.close();
    state.stream = null;
    setRunning(false);
    for (const p of state.runPanes) {
      p.el.classList.remove("running");
      if (p.stopBtn) p.stopBtn.disabled = true;
    }
  }

  function setRunning(on) {
    root.classList.toggle("running", on);
    if (ui.runBtn) ui.runBtn.disabled = on;
    if (ui.stopBtn) ui.stopBtn.disabled = !on;
    if (ui.replayBtn) ui.replayBtn.disabled = on;
    if (ui.contBtn) ui.contBtn.disabled = on;
    for (const b of $$(".pane-continue button", root)) b.disabled = on;
    const live = on && (state.kind === "run" || state.kind === "one");
    for (const p of state.runPanes) if (p.stopBtn) p.stopBtn.disabled = !live || p.done || !(p.run && p.run.id);
    renumber();
  }

  const NAMES = [
    ["fastest_first_token", "Fastest first token", (s) => fmt(s.ttft_ms, s.ttft_ms < 100 ? 1 : 0) + " ms"],
    ["highest_tokens_per_sec", "Highest tokens/s", (s) => fmt(s.tokens_per_sec) + " tokens/s"],
    ["fewest_tokens", "Fewest tokens", (s) => fmt(s.tokens) + " tokens"],
    ["lowest_cost", "Lowest cost", (s) => "$" + Number(s.cost_usd).toPrecision(3)],
  ];

  function groupDone(d) {
    const kind = state.kind;
    closeStream();
    ui.summaryList.textContent = "";
    const n = state.runPanes.length;
    const figures = d.panes || [];
    for (const [key, name, value] of NAMES) {
      const li = document.createElement("li");
      const k = document.createElement("strong");
      k.textContent = name + ": ";
      li.append(k);
      // Every pane that tied for the best wins; an older server names one.
      const won = ((d.winners && d.winners[key]) || (d[key] >= 0 ? [d[key]] : [])).filter((i) => state.runPanes[i]);
      if (!won.length) {
        const unpriced = key === "lowest_cost" && figures.some((s) => !s.cost_usd);
        li.append(unpriced ? "none: not every pane has a price" : "none");
      } else if (won.length === n && n > 1) {
        // A badge on every pane would tell nothing.
        li.append(`tie, every pane (${value(figures[won[0]] || {})})`);
      } else {
        const names = won.map((i) => label(state.runPanes[i]));
        li.append(`${names.join(" and ")} (${value(figures[won[0]] || {})})` + (won.length > 1 ? ", a tie" : ""));
        for (const i of won) {
          const b = document.createElement("span");
          b.className = "badge";
          b.dataset.award = key;
          b.textContent = name.toLowerCase() + (won.length > 1 ? " (tie)" : "");
          $(".pane-badges", state.runPanes[i].el).append(b);
        }
      }
      li.dataset.key = key;
      ui.summaryList.append(li);
    }
    ui.summary.hidden = state.summaryHidden;
    if (kind === "run" || kind === "load") showContinue();
    if (kind === "replay") say("Replay finished.");
    if (kind === "run") {
      say(`Saved as comparison ${state.group}.`);
      showShare();
    }
  }

  function hideSummary() {
    ui.summary.hidden = true;
  }

  function showContinue() {
    if (readOnly || endpoint() !== "chat") return;
    ui.cont.hidden = false;
    for (const f of $$(".pane-continue", root)) f.hidden = false;
  }

  function showShare() {
    if (!ui.share || !state.group) return;
    ui.share.hidden = false;
    const a = $("#cmp-saved-link");
    a.href = `/groups/${state.group}`;
    a.hidden = false;
    // knobs.js makes the links (shareBox): it only needs where to ask.
    // Links listed belong to the comparison before this one.
    const form = ui.share.querySelector("form[data-share]");
    const url = `/groups/${state.group}/shares`;
    if (form.getAttribute("action") !== url) {
      form.setAttribute("action", url);
      ui.share.querySelector("[data-share-list]").replaceChildren();
    }
  }

  async function stopAll() {
    if (!state.stream) return;
    if (state.kind === "run") {
      ui.stopBtn.disabled = true;
      await postJSON(`/groups/${state.group}/cancel`).catch(() => {});
    } else if (state.kind === "one") {
      await stopPane(state.runPanes[0]);
    } else {
      // A replay or a load: the runs are stored; just stop reading.
      closeStream();
      say("Replay stopped.");
    }
  }

  async function stopPane(p) {
    if (!p || !p.run || !p.run.id || p.done) return;
    if (p.stopBtn) p.stopBtn.disabled = true;
    await postJSON(`/runs/${p.run.id}/cancel`).catch(() => {});
  }

  // replay reads a saved or shared comparison again: at once (load) or
  // at its recorded pace (replay).
  function replay(url, kind) {
    if (state.stream || !url) return;
    state.runPanes = state.panes.slice();
    for (const p of state.panes) {
      p.history = p.specHistory.slice();
      p.run = null;
      p.choices = null;
    }
    state.panes.forEach((p) => startOutput(p, true, null, p.spec.body || {}));
    const first = state.panes[0];
    state.prompt = endpoint() === "completion" ? sharedPrompt : lastUser(state.base.concat(first ? first.specHistory : []));
    showPrompt();
    hideSummary();
    say(kind === "replay" ? "Replaying at the recorded pace…" : "");
    const stream = newStream(kind, null);
    setRunning(true);
    stream.listen(url);
  }

  // ---------- presets and the sweep ----------

  function specOfPane(p) {
    const errors = {};
    const body = paneBody(p, errors);
    return { spec: { provider: p.provider.value, endpoint: endpoint(), body }, errors };
  }

  if (!readOnly) {
    // The page lists presets by name; the setup of the one chosen is
    // fetched when it is loaded, so big team presets cost nothing until then.
    $("#cmp-preset-load").addEventListener("click", async () => {
      const opt = $("#cmp-preset").selectedOptions[0];
      const p = state.panes[Number($("#cmp-preset-pane").value) || 0];
      if (!opt || !opt.value || !p) return;
      const btn = $("#cmp-preset-load");
      btn.disabled = true;
      say(`Loading preset “${opt.textContent}”…`);
      let spec;
      try {
        const res = await fetch(`/presets/${encodeURIComponent(opt.value)}/spec`, { headers: { Accept: "application/json" } });
        const out = await res.json().catch(() => ({}));
        if (!res.ok) {
          say(out.error || `The preset could not be loaded (${res.status}).`, true);
          return;
        }
        spec = out.spec || {};
      } catch {
        say("The preset could not be loaded: Knobs did not answer.", true);
        return;
      } finally {
        btn.disabled = false;
      }
      if (!state.panes.includes(p)) return; // the pane was removed meanwhile
      setPaneSpec(p, { provider: spec.provider, endpoint: endpoint(), body: spec.body || {} });
      renumber();
      say(`Loaded preset “${opt.textContent}” into ${label(p)}.`);
    });

    $("#cmp-sweep-fill").addEventListener("click", () => {
      const err = $("#cmp-sweep-error");
      err.hidden = true;
      if (state.stream) return;
      const param = $("#cmp-sweep-param").value;
      const values = sweepValues($("#cmp-sweep-values").value, param);
      if (typeof values === "string") {
        err.textContent = values;
        err.hidden = false;
        return;
      }
      const base = state.panes[Number($("#cmp-sweep-base").value) || 0];
      const { spec, errors } = specOfPane(base);
      if (Object.keys(errors).length) {
        err.textContent = "Fix the base pane's parameters first.";
        err.hidden = false;
        return;
      }
      for (const p of state.panes) p.el.remove();
      state.panes = [];
      for (const v of values) addPane({ provider: spec.provider, endpoint: endpoint(), body: Object.assign({}, spec.body, { [param]: v }) });
      say(`${values.length} panes of ${spec.body.model}, ${param} ${values.join(", ")}.`);
    });
  }

  // sweepValues parses "0, 0.7, 1.2" or "1-4" into 2 to 6 values, or
  // returns what is wrong.
  function sweepValues(text, param) {
    const t = text.trim();
    let vals;
    const range = /^(-?\d+)\s*(?:-|–|\.\.)\s*(-?\d+)$/.exec(t);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b < a) return "A range goes up: 1-4.";
      vals = [];
      for (let v = a; v <= b && vals.length <= MAX; v++) vals.push(v);
    } else {
      vals = t.split(/[\s,;]+/).filter(Boolean).map(Number);
      if (vals.some((v) => Number.isNaN(v))) return "Write numbers separated by commas, or a range like 1-4.";
    }
    if (param === "seed" && vals.some((v) => !Number.isInteger(v))) return "Seeds are whole numbers.";
    if (vals.length < MIN || vals.length > MAX) return `Give ${MIN} to ${MAX} values; that is ${vals.length}.`;
    return vals;
  }

  // ---------- presenter mode and keys ----------

  function presenting() {
    return ui.stage.classList.contains("presenting");
  }

  function lastUser(messages) {
    for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "user") return contentText(messages[i].content);
    return "";
  }

  // editorPrompt is what Run all would send: the completion prompt or the
  // conversation's last user message.
  function editorPrompt() {
    if (endpoint() === "completion") return ui.prompt ? ui.prompt.value : sharedPrompt;
    return lastUser(readOnly ? state.base : readConversation());
  }

  // showPrompt puts the prompt the panes answer (or will answer) on the
  // stage.
  function showPrompt() {
    const text = state.prompt !== null ? state.prompt : editorPrompt();
    ui.presentPrompt.textContent = text.trim() || "No prompt yet.";
    ui.presentPrompt.classList.toggle("muted", !text.trim());
  }

  // The stage's title and the toolbar's are one: editing either changes
  // both, and a saved comparison keeps it.
  const titleInputs = [ui.title, ui.presentTitle].filter((el) => el && el.tagName === "INPUT");
  for (const el of titleInputs) {
    el.addEventListener("input", () => titleInputs.forEach((o) => o !== el && (o.value = el.value)));
    el.addEventListener("change", () => saveTitle(el.value));
  }
  if (ui.presentTitle && ui.presentTitle.tagName === "INPUT")
    ui.presentTitle.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        ui.presentTitle.blur(); // change: saved
        ui.stage.focus();
      }
    });

  async function saveTitle(title) {
    if (readOnly || !state.group) return; // a new comparison sends it with Run all
    const res = await postJSON(`/groups/${state.group}/title`, { title: title.trim() }).catch(() => null);
    const data = res ? await res.json().catch(() => ({})) : {};
    if (!res || !res.ok) {
      say(data.error || "The title could not be saved.", true);
      return;
    }
    say(`Comparison ${state.group} is now “${data.title || "Untitled"}”.`);
  }

  async function togglePresenter() {
    if (presenting()) {
      ui.stage.classList.remove("presenting");
      root.classList.remove("presenting");
      if (document.fullscreenElement) await document.exitFullscreen().catch(() => {});
      return;
    }
    showPrompt();
    ui.stage.classList.add("presenting");
    root.classList.add("presenting");
    ui.stage.focus();
    if (ui.stage.requestFullscreen) await ui.stage.requestFullscreen().catch(() => {});
  }

  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && presenting()) {
      ui.stage.classList.remove("presenting");
      root.classList.remove("presenting");
    }
  });

  function focusPane(step) {
    const i = state.panes.findIndex((p) => p.el === document.activeElement || p.el.contains(document.activeElement));
    const next = state.panes[(i + step + state.panes.length) % state.panes.length];
    if (next) next.el.focus();
  }

  function go() {
    if (readOnly) replay(root.dataset.replay, "replay");
    else runAll();
  }

  function typing(e) {
    const t = e.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  }

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      go();
      return;
    }
    if (e.key === "Escape") {
      if (state.stream) {
        e.preventDefault();
        stopAll();
      } else if (presenting()) togglePresenter();
      return;
    }
    if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "p") {
      e.preventDefault();
      togglePresenter();
    } else if (presenting()) {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        go();
      } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        e.preventDefault();
        focusPane(e.key === "ArrowRight" ? 1 : -1);
      } else if (e.key === "s") {
        state.summaryHidden = !state.summaryHidden;
        if (ui.summaryList.childElementCount) ui.summary.hidden = state.summaryHidden;
      }
    }
  });

  if (ui.runBtn) ui.runBtn.addEventListener("click", () => runAll());
  if (ui.stopBtn) ui.stopBtn.addEventListener("click", stopAll);
  if (ui.addBtn)
    ui.addBtn.addEventListener("click", async () => {
      const last = state.panes[state.panes.length - 1];
      const spec = last ? specOfPane(last).spec : undefined;
      // A copy of the last pane, on a model no pane of its provider runs
      // yet when there is one.
      if (spec) {
        const used = new Set(state.panes.filter((p) => p.provider.value === spec.provider).map(modelOf));
        const free = ((await modelList(spec.provider)) || []).find((m) => !used.has(m.id));
        if (free) spec.body = Object.assign({}, spec.body, { model: free.id });
      }
      addPane(spec);
    });
  if (ui.replayBtn) ui.replayBtn.addEventListener("click", () => replay(root.dataset.replay, "replay"));
  ui.presentBtn.addEventListener("click", togglePresenter);
  if (ui.contBtn)
    ui.contBtn.addEventListener("click", async () => {
      const text = ui.contText.value;
      if (text.trim() === "") {
        ui.contText.focus();
        return;
      }
      if (await runAll(text)) ui.contText.value = "";
    });

  // ---------- start ----------

  const specs = (start.panes || []).filter((s) => s && typeof s === "object");
  // Every pane a completion: the page opens in completion mode with the
  // first prompt; a mix runs as chat, each prompt becoming a user message.
  const allCompletion = specs.length > 0 && specs.every((s) => s.endpoint === "completion");
  if (allCompletion) {
    sharedEndpoint = "completion";
    const r = $('input[name="cmp-endpoint"][value="completion"]');
    if (r) r.checked = true;
    // In the form that keeps it exact: an array stays an array.
    const { form, text } = writePrompt((specs[0].body || {}).prompt);
    sharedPrompt = text;
    if (ui.prompt) ui.prompt.value = text;
    if (ui.promptForm) ui.promptForm.value = form;
    if (readOnly) {
      ui.transcript.textContent = "";
      ui.transcript.append(turnItem(form === "text" ? "prompt" : form === "rows" ? "prompts" : "prompt (JSON)", text));
    }
  }
  const lists = allCompletion ? specs.map(() => []) : specs.map((s) => toMessages(s.body || {}));
  state.base = commonPrefix(lists);
  if (!allCompletion) fillConversation(state.base);
  else if (!readOnly) fillConversation([]);
  specs.slice(0, MAX).forEach((s, i) => {
    const p = addPane({ provider: s.provider, endpoint: endpoint(), body: s.body || {} });
    p.specHistory = lists[i].slice(state.base.length);
    p.history = p.specHistory.slice();
  });
  while (!readOnly && state.panes.length < MIN) addPane(specs[0]);
  showMode();
  $$('input[name="cmp-endpoint"]').forEach((r) =>
    r.addEventListener("change", () => {
      showMode();
      for (const p of state.panes) loadPanel(p);
    }),
  );
  if (!allCompletion && specs.some((s) => s.endpoint === "completion")) say("Completion setups run as chat here: the prompt became a user message.");
  else if (start.notice) say(start.notice);
  if (mode === "saved" && root.dataset.events) replay(root.dataset.events, "load");
  if (readOnly) say("Press Replay (or Enter in presenter mode) to watch every pane answer at its recorded pace.");
})();
