// Knobs playground: the editor, the parameter panel, and the live run.
//
// The request is the state: everything on the page reads from and writes
// to one RunSpec {provider, endpoint, body}. Streamed text is appended at
// most once per animation frame, so thousands of tokens per second do not
// stall the page.
"use strict";

import { EventStream, TextBlocks, Follower, FrameWrites, swapHTML } from "./stream.js";
import { readPrompt as readPromptText, writePrompt as promptEditorText, promptShape, choiceLabel } from "./prompt.js";
import { wirePanel, ModelPicker, promptTokens, costLine, tokenLine } from "./controls.js";
import { readPanel, readPanelParts, applyPanel, showFieldError, clearFieldErrors } from "./panel.js";
import { ROLES, contentText, jsonHeaders, postJSON, metricsList, showAnswerLabels, showRunError as showErrorIn, hideRunError as hideErrorIn, rawTokens } from "./run.js";

(() => {
  const root = document.getElementById("playground");
  if (!root) return;

  const $ = (sel, el = document) => el.querySelector(sel);
  const $$ = (sel, el = document) => Array.from(el.querySelectorAll(sel));

  const ui = {
    provider: $("#pg-provider"),
    model: $("#pg-model"),
    estimate: $("#pg-estimate"),
    modelHint: $("[data-model-hint]"),
    newBtn: $("#pg-new"),
    runBtn: $("#pg-run"),
    stopBtn: $("#pg-stop"),
    regenBtn: $("#pg-regenerate"),
    addBtn: $("#pg-add"),
    reply: $("#pg-reply"),
    replyText: $("#pg-reply-text"),
    system: $("[data-system]"),
    messages: $("#pg-messages"),
    prompt: $("[data-prompt]"),
    promptForm: $("[data-prompt-form]"),
    panel: $("#pg-panel"),
    choices: $("#pg-choices"),
    error: $("#pg-error"),
    metrics: $("#pg-metrics"),
    rawRequest: $("#pg-raw-request"),
    rawEvents: $("#pg-raw-events"),
    rawResponse: $("#pg-raw-response"),
    code: $("#pg-code"),
    showRaw: $("#pg-show-raw"),
  };

  // ---------- the chat editor ----------

  function messageRow(msg) {
    const li = document.createElement("li");
    li.className = "message";
    const n = Math.random().toString(36).slice(2, 8);
    li.innerHTML = `
      <div class="msg-head">
        <label class="sr-label" for="role-${n}">Role</label>
        <select id="role-${n}" data-role>${ROLES.map((r) => `<option value="${r}">${r}</option>`).join("")}</select>
        <span class="tool-id" hidden><label for="tcid-${n}">tool_call_id</label>
          <input id="tcid-${n}" data-tool-call-id spellcheck="false" size="18"></span>
        <span class="grow"></span>
        <button type="button" class="link" data-copy-message title="Copy this message's text">Copy</button>
        <button type="button" class="link" data-branch title="A new conversation of the messages up to this one">Branch from here</button>
        <button type="button" class="icon" data-move="-1" aria-label="Move up" title="Move up">↑</button>
        <button type="button" class="icon" data-move="1" aria-label="Move down" title="Move down">↓</button>
        <button type="button" class="icon danger" data-delete aria-label="Delete message" title="Delete">✕</button>
      </div>
      <label class="sr-label" for="content-${n}">Message content</label>
      <textarea id="content-${n}" data-content rows="2"></textarea>
      <details class="msg-reasoning" hidden><summary>Reasoning</summary>
        <label class="sr-label" for="reasoning-${n}">Reasoning</label>
        <textarea id="reasoning-${n}" data-reasoning rows="2"></textarea></details>
      <details class="msg-tool-calls" hidden><summary>Tool calls (JSON)</summary>
        <label class="sr-label" for="tc-${n}">Tool calls</label>
        <textarea id="tc-${n}" data-tool-calls rows="3" spellcheck="false"></textarea></details>
      <p class="field-error" data-msg-error hidden></p>`;
    $("[data-role]", li).value = ROLES.includes(msg.role) ? msg.role : "user";
    $("[data-content]", li).value = contentText(msg.content);
    $("[data-tool-call-id]", li).value = msg.tool_call_id || "";
    $("[data-reasoning]", li).value = msg.reasoning || msg.reasoning_content || "";
    if (msg.tool_calls) $("[data-tool-calls]", li).value = JSON.stringify(msg.tool_calls, null, 2);
    if (Array.isArray(msg.content)) li.dataset.parts = JSON.stringify(msg.content);
    syncRow(li);
    return li;
  }

  function syncRow(li) {
    const role = $("[data-role]", li).value;
    li.dataset.roleName = role;
    $("[data-content]", li).placeholder = `The ${role} message: type here to edit it`;
    $(".tool-id", li).hidden = role !== "tool";
    const reasoning = $(".msg-reasoning", li);
    reasoning.hidden = role !== "assistant";
    const tc = $(".msg-tool-calls", li);
    tc.hidden = role !== "assistant";
    if (!tc.hidden && $("[data-tool-calls]", li).value.trim()) tc.open = true;
  }

  function readMessages(errors) {
    const out = [];
    const sys = ui.system.value;
    if (sys.trim() !== "") out.push({ role: "system", content: sys });
    $$(".message", ui.messages).forEach((li) => {
      const m = { role: $("[data-role]", li).value, content: textOf($("[data-content]", li)) };
      if (m.role === "tool") m.tool_call_id = $("[data-tool-call-id]", li).value.trim();
      if (m.role === "assistant") {
        const r = textOf($("[data-reasoning]", li));
        if (r.trim() !== "") m.reasoning = r;
        const tc = $("[data-tool-calls]", li).value.trim();
        if (tc) {
          try {
            m.tool_calls = JSON.parse(tc);
          } catch (e) {
            errors[`messages.${out.length}.tool_calls`] = "The tool calls are not valid JSON: " + e.message;
          }
        }
      }
      out.push(m);
    });
    return out;
  }

  function renderMessages(list) {
    ui.messages.textContent = "";
    ui.system.value = "";
    let rest = list || [];
    if (rest.length && rest[0].role === "system" && typeof rest[0].content === "string") {
      ui.system.value = rest[0].content;
      rest = rest.slice(1);
    }
    rest.forEach((m) => ui.messages.appendChild(messageRow(m)));
    $$("textarea", ui.messages).forEach(autosize);
    autosize(ui.system);
  }

  function autosize(t) {
    if (!t) return;
    t.style.height = "auto";
    t.style.height = Math.min(t.scrollHeight + 2, 480) + "px";
  }

  ui.messages.addEventListener("change", (e) => {
    if (e.target.matches("[data-role]")) syncRow(e.target.closest(".message"));
    changed();
  });
  ui.messages.addEventListener("input", (e) => {
    if (e.target.matches("textarea")) autosize(e.target);
    changed();
  });
  ui.messages.addEventListener("click", (e) => {
    const li = e.target.closest(".message");
    if (!li) return;
    if (e.target.closest("[data-delete]")) {
      li.remove();
      changed();
    } else if (e.target.closest("[data-copy-message]")) {
      const area = $("[data-content]", li);
      copyText(textOf(area), e.target.closest("[data-copy-message]"), area);
    } else if (e.target.closest("[data-branch]")) {
      branchFrom(li);
    } else if (e.target.closest("[data-move]")) {
      const dir = Number(e.target.closest("[data-move]").dataset.move);
      if (dir < 0 && li.previousElementSibling) li.parentNode.insertBefore(li, li.previousElementSibling);
      if (dir > 0 && li.nextElementSibling) li.parentNode.insertBefore(li.nextElementSibling, li);
      changed();
    }
  });
  $$("[data-add-message]").forEach((b) =>
    b.addEventListener("click", () => {
      const row = messageRow({ role: b.dataset.addMessage, content: "" });
      ui.messages.appendChild(row);
      autosize($("[data-content]", row));
      $("[data-content]", row).focus();
      changed();
    }),
  );
  ui.system.addEventListener("input", () => {
    autosize(ui.system);
    changed();
  });
  ui.prompt.addEventListener("input", changed);
  ui.promptForm.addEventListener("change", changed);

  // ---------- the completion prompt ----------

  // The prompt's forms, reading and labels are prompt.js's, shared with
  // the compare page.
  function readPrompt(errors) {
    const { value, error } = readPromptText(ui.prompt.value, ui.promptForm.value);
    if (error) errors.prompt = error;
    return value;
  }

  function writePrompt(p) {
    const { form, text } = promptEditorText(p);
    ui.promptForm.value = form;
    ui.prompt.value = text;
  }

  // ---------- mode, provider, model and the panel ----------

  const endpoint = () => $('input[name="endpoint"]:checked').value;

  function showMode() {
    const mode = endpoint();
    $$("[data-mode]", root).forEach((el) => (el.hidden = el.dataset.mode !== mode));
  }

  // busy marks the page while the panel or the model list loads, so that
  // scripts driving the page (and its tests) can wait for it to settle.
  let busyCount = 0;
  async function busy(work) {
    root.dataset.busy = String(++busyCount);
    try {
      return await work();
    } finally {
      if (--busyCount === 0) delete root.dataset.busy;
      else root.dataset.busy = String(busyCount);
    }
  }

  let panelSeq = 0;
  function reloadPanel() {
    return busy(reloadPanelNow);
  }
  async function reloadPanelNow() {
    const seq = ++panelSeq;
    const q = new URLSearchParams({ provider: ui.provider.value, endpoint: endpoint(), model: ui.model.value });
    const res = await fetch("/playground/panel?" + q, { headers: { Accept: "text/html" } });
    if (!res.ok || seq !== panelSeq) return;
    const html = await res.text();
    if (seq !== panelSeq) return;
    const kept = readPanelParts(ui.panel, {}); // what the user set, up to this moment, across the swap
    ui.panel.innerHTML = html;
    applyPanel(ui.panel, kept.fields, kept.extra);
    const p = $(".panel", ui.panel);
    changed();
    return p;
  }

  async function loadModels() {
    const res = await fetch("/playground/models?" + new URLSearchParams({ provider: ui.provider.value }), {
      headers: { Accept: "application/json" },
    });
    if (!res.ok) return;
    const data = await res.json();
    state.models = {};
    for (const m of data.models || []) state.models[m.id] = m;
    picker.setModels(data.models);
    updateModelHint(data.note);
    showEstimate();
  }

  function updateModelHint(note) {
    const m = state.models[ui.model.value];
    ui.modelHint.textContent = [m ? m.hint : "", note || ""].filter(Boolean).join(" — ");
    ui.modelHint.title = ui.modelHint.textContent; // the line is cut to fit the toolbar
  }

  const state = { models: {}, run: null, stream: null, metrics: null, lastSpec: null, choices: [], variables: {}, preset: null, lastRunId: 0, baseline: "", ran: "" };
  try {
    state.preset = root.dataset.preset ? JSON.parse(root.dataset.preset) : null;
  } catch {
    state.preset = null;
  }

  ui.provider.addEventListener("change", () =>
    busy(async () => {
      await loadModels();
      const first = Object.keys(state.models)[0];
      if (first && !state.models[ui.model.value]) ui.model.value = first;
      updateModelHint();
      await reloadPanelNow();
    }),
  );
  const picker = new ModelPicker(ui.model);
  ui.model.addEventListener("change", () => {
    updateModelHint();
    reloadPanel();
    showEstimate();
  });
  $$('input[name="endpoint"]').forEach((r) =>
    r.addEventListener("change", () => {
      showMode();
      reloadPanel();
    }),
  );

  // ---------- reading and filling the panel ----------

  // setError shows a field's message beside it: a message's own in its
  // row, a parameter's in the panel; what has no place goes in the error box.
  function setError(field, msg) {
    const m = /^messages\.(\d+)/.exec(field);
    if (m) {
      const idx = Number(m[1]) - (ui.system.value.trim() !== "" ? 1 : 0);
      const li = $$(".message", ui.messages)[idx];
      const el = li ? $("[data-msg-error]", li) : $('[data-error-for="messages"]');
      el.textContent = msg;
      el.hidden = false;
      return;
    }
    if (!showFieldError(document, field, msg)) showRunError({ kind: "validation", message: `${field}: ${msg}` });
  }

  wirePanel(ui.panel);
  ui.panel.addEventListener("input", changed);
  ui.panel.addEventListener("change", changed);

  // ---------- the spec ----------

  function buildSpec() {
    const errors = {};
    const body = Object.assign({ model: ui.model.value.trim() }, readPanel(ui.panel, errors));
    if (endpoint() === "chat") body.messages = readMessages(errors);
    else body.prompt = readPrompt(errors);
    const spec = { provider: ui.provider.value, endpoint: endpoint(), body };
    const names = variableNames();
    if (names.length) {
      spec.variables = {};
      for (const n of names) if (state.variables[n] !== undefined) spec.variables[n] = state.variables[n];
    }
    if (state.preset) {
      spec.preset_id = state.preset.id;
      spec.preset_version = state.preset.version;
      spec.preset_name = state.preset.name;
      if (state.preset.label) spec.preset_label = state.preset.label;
    }
    return { spec, errors };
  }

  function applySpec(spec) {
    const body = spec.body || {};
    state.variables = Object.assign({}, spec.variables || {});
    ui.provider.value = spec.provider;
    ui.model.value = body.model || "";
    $$('input[name="endpoint"]').forEach((r) => (r.checked = r.value === (spec.endpoint || "chat")));
    showMode();
    if (spec.endpoint === "completion") {
      writePrompt(body.prompt);
    } else renderMessages(body.messages);
    applyPanel(ui.panel, body);
  }

  let saveTimer = 0;
  function changed() {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveState, 700);
    renderVariables();
    showPreset();
    showEstimate();
  }

  // ---------- the sticky toolbar ----------

  // The toolbar sticks under the top bar and the parameters under both:
  // their heights change with the window and the wrapping of the top bar.
  {
    const topbar = document.querySelector(".topbar");
    const bar = $(".pg-toolbar", root);
    const measure = () => {
      const top = topbar ? topbar.offsetHeight : 0;
      root.style.setProperty("--topbar-h", top + "px");
      root.style.setProperty("--pg-bar-h", bar.offsetHeight + "px");
      // What the page scrolls into view (a focused field, a message to
      // edit) lands below the bars, not under them. On a phone the bar is
      // at the bottom and not sticky at the top.
      const sticky = getComputedStyle(bar).position === "sticky";
      document.documentElement.style.scrollPaddingTop = top + (sticky ? bar.offsetHeight : 0) + 8 + "px";
    };
    new ResizeObserver(measure).observe(bar);
    if (topbar) new ResizeObserver(measure).observe(topbar);
  }

  // ---------- prompt size and cost, near Run ----------

  // showEstimate updates the estimate once per animation frame, however
  // fast the user types.
  let estimateFrame = 0;
  function showEstimate() {
    if (estimateFrame) return;
    estimateFrame = requestAnimationFrame(() => {
      estimateFrame = 0;
      const chat = endpoint() === "chat";
      const raw = chat ? [ui.system.value, ...$$(".message [data-content]", ui.messages).map(textOf)].filter((t, i) => i > 0 || t.trim() !== "") : [ui.prompt.value];
      // What is sent has the {{variables}} filled in.
      const texts = raw.map((t) => t.replace(VAR_RE, (all, name) => state.variables[name] ?? all));
      const input = promptTokens(endpoint(), texts);
      const body = readPanel(ui.panel, {});
      const limit = chat ? (body.max_completion_tokens ?? body.max_tokens) : body.max_tokens;
      const choices = Math.max(Number(body.n) || 1, Number(body.best_of) || 1);
      const m = state.models[ui.model.value.trim()];
      ui.estimate.textContent = tokenLine(input) + " · " + costLine(m ? m.info : null, input, limit ?? null, choices);
    });
  }

  // ---------- variables ----------

  const VAR_RE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;
  const varBox = $("#pg-vars");
  const varList = $("#pg-var-list");

  // variableNames lists the {{name}} placeholders of the prompt or messages,
  // in order of first appearance.
  function variableNames() {
    const texts = endpoint() === "chat" ? [ui.system.value, ...$$(".message [data-content]", ui.messages).map(textOf)] : [ui.prompt.value];
    const seen = [];
    for (const t of texts) for (const m of t.matchAll(VAR_RE)) if (!seen.includes(m[1])) seen.push(m[1]);
    return seen;
  }

  function renderVariables() {
    const names = variableNames();
    varBox.hidden = names.length === 0;
    const have = $$("[data-var]", varList).map((i) => i.dataset.var);
    if (have.join("\u0000") === names.join("\u0000")) return;
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.var : null;
    varList.textContent = "";
    for (const n of names) {
      const row = document.createElement("div");
      row.className = "param";
      const label = document.createElement("label");
      label.htmlFor = "var-" + n;
      label.textContent = "{{" + n + "}}";
      const input = document.createElement("textarea");
      input.id = "var-" + n;
      input.rows = 1;
      input.dataset.var = n;
      input.value = state.variables[n] ?? "";
      input.addEventListener("input", () => {
        state.variables[n] = input.value;
        clearTimeout(saveTimer);
        saveTimer = setTimeout(saveState, 700);
        showPreset();
        showEstimate();
      });
      const err = document.createElement("p");
      err.className = "field-error";
      err.dataset.errorFor = "variables." + n;
      err.hidden = true;
      row.append(label, input, err);
      varList.appendChild(row);
      if (focused === n) input.focus();
    }
  }

  // ---------- presets ----------

  const presetName = $("#pg-preset-name");
  const presetDirty = $("#pg-preset-dirty");
  const saveBtn = $("#pg-save");
  const saveAsBtn = $("#pg-save-as");
  const saveDialog = $("#pg-save-dialog");
  const presetStatus = $("#pg-preset-status");

  // canonical writes JSON with sorted keys, so that two setups compare by content.
  function canonical(v) {
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    if (v && typeof v === "object") return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
    return JSON.stringify(v);
  }

  function setupOf(spec, variables) {
    return canonical({ provider: spec.provider, endpoint: spec.endpoint, body: spec.body, variables: variables || {} });
  }

  function showPreset() {
    const p = state.preset;
    // Opened at a label, the preset is named with it: "Summariser · production (v3)".
    presetName.textContent = p ? (p.label ? `${p.name} · ${p.label} (v${p.version})` : p.name) : "none";
    if (!p) {
      presetDirty.hidden = true;
      saveBtn.disabled = true;
      return;
    }
    const { spec } = buildSpec();
    const dirty = setupOf(spec, spec.variables) !== setupOf(p.spec, p.variables);
    presetDirty.hidden = !dirty;
    saveBtn.disabled = !dirty || !p.can_edit;
    saveBtn.title = p.can_edit ? "Save the changes: as a new version of the preset, or as a new preset" : "Only its owner or an admin can change this preset: save it as a new one";
  }

  function presetMessage(text, bad) {
    presetStatus.hidden = false;
    presetStatus.textContent = text;
    presetStatus.classList.toggle("bad", !!bad);
  }

  async function savePreset(body, url) {
    const res = await postJSON(url, body).catch(() => null);
    if (!res) return { error: "Knobs could not be reached." };
    const data = await res.json().catch(() => ({}));
    if (!res.ok) return { error: data.error || `Knobs answered ${res.status}.`, fields: data.fields };
    return data;
  }

  function adopt(saved, spec) {
    // A saved version is no label's: the label the preset was opened at is dropped.
    state.preset = {
      id: saved.id,
      name: saved.name,
      version: saved.version,
      spec: { provider: spec.provider, endpoint: spec.endpoint, body: spec.body },
      variables: Object.assign({}, spec.variables || {}),
      can_edit: true,
    };
    state.baseline = fingerprintOf(spec); // saved: nothing to lose now
    changed();
    saveState();
  }

  // Save asks what the changes become: the loaded preset's next version,
  // or a preset of their own.
  saveBtn.addEventListener("click", async () => {
    const p = state.preset;
    if (!p) return;
    const choice = await ask(
      `Save your changes to ${p.name}?`,
      `The setup differs from version ${p.version} of ${p.name}. A new version keeps the earlier ones in the preset's history.`,
      [
        { value: "version", label: `Save as new version of ${p.name}`, primary: true },
        { value: "new", label: "Save as a new preset" },
        { value: "", label: "Cancel" },
      ],
    );
    if (choice === "version") saveVersion();
    else if (choice === "new") openSaveAs();
  });

  async function saveVersion() {
    if (!state.preset) return;
    const { spec, errors } = buildSpec();
    if (Object.keys(errors).length) return;
    const saved = await savePreset({ spec, variables: spec.variables || {}, version: state.preset.version }, `/presets/${state.preset.id}`);
    if (saved.error) return presetMessage(saved.error, true);
    adopt(saved, spec);
    presetMessage(`Saved ${saved.name} as version ${saved.version}.`);
  }

  function openSaveAs() {
    $("#sv-name", saveDialog).value = state.preset ? state.preset.name + " (copy)" : "";
    saveDialog.showModal();
  }
  saveAsBtn.addEventListener("click", openSaveAs);

  $("#pg-save-form").addEventListener("submit", async (e) => {
    if (e.submitter && e.submitter.value === "cancel") return;
    e.preventDefault();
    const f = e.target;
    const { spec, errors } = buildSpec();
    if (Object.keys(errors).length) {
      saveDialog.close();
      for (const [k, m] of Object.entries(errors)) setError(k, m);
      return;
    }
    const saved = await savePreset(
      { name: f.name.value, description: f.description.value, tags: f.tags.value, visibility: f.visibility.value, spec, variables: spec.variables || {} },
      "/presets",
    );
    $$(".field-error", f).forEach((el) => (el.hidden = true));
    if (saved.error) {
      for (const [k, m] of Object.entries(saved.fields || { name: saved.error })) {
        const el = $(`[data-error-for="preset.${k}"]`, f) || $('[data-error-for="preset.name"]', f);
        el.textContent = m;
        el.hidden = false;
      }
      return;
    }
    saveDialog.close();
    adopt(saved, spec);
    presetMessage(`Saved as the preset ${saved.name}.`);
  });
  // saveState keeps the editor, the run the output shows, and whether
  // the editor has unsaved changes: opening a run, a preset or a link
  // into the playground asks first when it has.
  function saveState() {
    clearTimeout(saveTimer);
    saveTimer = 0;
    // While the page asks whether to open another setup, the answer
    // decides what is stored: a save now could undo a "replace".
    if (state.asking) return;
    const { spec } = buildSpec();
    const fp = fingerprintOf(spec);
    const saved = Object.assign({}, spec, { last_run: state.lastRunId || undefined, baseline: state.baseline, ran: state.ran || undefined, unsaved: fp !== state.baseline });
    // data-saving and data-stored tell scripts driving the page (and its
    // tests) that the server has what the editor holds.
    root.dataset.saving = String(++saving);
    postJSON("/playground/state", saved, { keepalive: true })
      .then((res) => {
        if (res.ok) root.dataset.stored = saved.unsaved ? "unsaved" : "clean";
        else if (res.status === 404 && saved.last_run && state.lastRunId === saved.last_run) {
          state.lastRunId = 0; // the run is gone from history: keep the editor without it
          saveState();
        }
      })
      .catch(() => {})
      .finally(() => {
        if (--saving === 0) delete root.dataset.saving;
      });
  }
  let saving = 0;
  // Leaving the page (for History, say) must not lose the last change.
  window.addEventListener("pagehide", () => {
    if (saveTimer) saveState();
  });

  // ---------- unsaved changes ----------

  // A fingerprint of the setup (cyrb53 of its canonical JSON): the editor
  // has unsaved changes when it differs from the setup last run, loaded
  // or saved (state.baseline).
  function hash(str) {
    let h1 = 0xdeadbeef,
      h2 = 0x41c6ce57;
    for (let i = 0; i < str.length; i++) {
      const ch = str.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (h2 >>> 0).toString(16).padStart(8, "0") + (h1 >>> 0).toString(16).padStart(8, "0");
  }
  const fingerprintOf = (spec) => hash(setupOf(spec, spec.variables));
  const fingerprint = () => fingerprintOf(buildSpec().spec);
  const unsaved = () => fingerprint() !== state.baseline;

  // ask shows the page's question dialog and resolves to the value of the
  // choice made, "" when it was dismissed (Esc).
  const confirmBox = $("#pg-confirm");
  function ask(title, text, choices) {
    if (confirmBox.open) return Promise.resolve(""); // one question at a time
    $("#pg-confirm-h").textContent = title;
    $("#pg-confirm-text").textContent = text;
    const box = $("#pg-confirm-choices");
    box.textContent = "";
    for (const c of choices) {
      const b = document.createElement("button");
      b.value = c.value;
      b.textContent = c.label;
      if (c.primary) b.className = "primary";
      box.append(b);
    }
    confirmBox.returnValue = "";
    confirmBox.showModal();
    return new Promise((resolve) => confirmBox.addEventListener("close", () => resolve(confirmBox.returnValue), { once: true }));
  }

  // ---------- New and Branch ----------

  ui.newBtn.addEventListener("click", async () => {
    if (state.stream) return;
    if (unsaved()) {
      const choice = await ask(
        "Discard your changes?",
        "The editor has changes that were not run or saved. New empties the conversation, the output and the loaded preset; the provider and model stay.",
        [
          { value: "discard", label: "Discard changes", primary: true },
          { value: "keep", label: "Keep editing" },
        ],
      );
      if (choice !== "discard") return;
    }
    state.preset = null;
    state.variables = {};
    renderMessages([{ role: "user", content: "" }]);
    writePrompt("");
    applyPanel(ui.panel, {});
    clearFieldErrors(document);
    resetOutput();
    state.ran = "";
    state.baseline = fingerprint(); // an empty editor has nothing to lose
    changed();
    saveState();
    const first = $("#pg-messages [data-content]");
    if (first && endpoint() === "chat") first.focus();
    else ui.prompt.focus();
  });

  // branchFrom makes a new conversation of the messages up to and
  // including li, with no preset attached. The old one is in history only
  // as the runs it made: the question says what would be lost.
  async function branchFrom(li) {
    if (state.stream) return;
    const rows = $$(".message", ui.messages);
    const n = rows.indexOf(li) + 1;
    const fp = fingerprint();
    let kept;
    if (state.ran && state.ran === fp) kept = "This conversation stays in history as the runs it made.";
    else if (state.ran) kept = "Its runs stay in history, but the changes made since it was last run are not in history: they will be lost.";
    else kept = "Nothing of this conversation was run, so it is not in history: branching replaces it for good.";
    const choice = await ask(
      `Branch from message ${n}?`,
      `A new conversation of messages 1 to ${n}${rows.length > n ? ` (the ${rows.length - n} after it are left out)` : ""}, with no preset attached. ${kept}`,
      [
        { value: "branch", label: "Branch", primary: true },
        { value: "keep", label: "Cancel" },
      ],
    );
    if (choice !== "branch") return;
    rows.slice(n).forEach((r) => r.remove());
    state.preset = null;
    resetOutput();
    state.ran = "";
    changed();
    saveState();
    $("[data-content]", li).focus();
  }

  // ---------- copying ----------

  // copyText puts text on the clipboard; where the page may not write it
  // there, the text is selected for the user to copy. The button says
  // which happened.
  async function copyText(text, btn, source) {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      const t = document.createElement("textarea");
      t.value = text;
      t.setAttribute("readonly", "");
      t.className = "offscreen";
      document.body.append(t);
      t.select();
      try {
        ok = document.execCommand("copy");
      } catch {
        ok = false;
      }
      t.remove();
    }
    if (!ok && source) {
      if (source.select) {
        source.focus();
        source.select();
      } else {
        const r = document.createRange();
        r.selectNodeContents(source);
        getSelection().removeAllRanges();
        getSelection().addRange(r);
      }
    }
    if (!btn.dataset.label) btn.dataset.label = btn.textContent;
    btn.dataset.copied = ok ? "copied" : "selected"; // what the last click did, for scripts and tests
    btn.textContent = ok ? "Copied" : "Selected: press Ctrl+C";
    clearTimeout(btn.copied);
    btn.copied = setTimeout(() => (btn.textContent = btn.dataset.label), 2000);
  }

  $("[data-copy-system]").addEventListener("click", (e) => copyText(ui.system.value, e.currentTarget, ui.system));

  // codeCopyButtons gives each code block of a rendered answer a Copy button.
  function codeCopyButtons(box) {
    for (const pre of $$("pre", box)) {
      if (pre.parentElement.classList.contains("code-block")) continue;
      const wrap = document.createElement("div");
      wrap.className = "code-block";
      const b = document.createElement("button");
      b.type = "button";
      b.className = "copy code-copy";
      b.textContent = "Copy";
      pre.replaceWith(wrap);
      wrap.append(b, pre);
    }
  }

  // ---------- running ----------

  // run starts the run and reads its events on the same request: the POST
  // answers the event stream. A server that answers JSON instead gets an
  // EventSource on the events URL it names.
  async function run() {
    if (state.stream) return;
    clearFieldErrors(document);
    hideRunError();
    const { spec, errors } = buildSpec();
    if (Object.keys(errors).length) {
      for (const [f, m] of Object.entries(errors)) setError(f, m);
      return;
    }
    if (state.ending) state.ending.close(); // the last run's rendered answer is no longer wanted
    state.ending = null;
    const stream = newStream();
    state.stream = stream;
    setRunning(true);
    let res;
    try {
      res = await stream.post("/runs", JSON.stringify(spec), jsonHeaders());
    } catch (e) {
      endStream();
      showRunError({ kind: "network", message: "Knobs could not be reached: " + e.message });
      return;
    }
    showBudget(res);
    if (EventStream.isStream(res)) {
      ranNow(spec);
      state.lastSpec = spec;
      state.shape = promptShape(spec && spec.endpoint, spec && spec.body);
      startOutput(Number(res.headers.get("X-Knobs-Run")));
      stream.read(res);
    } else {
      const data = await res.json().catch(() => ({}));
      if (!res.ok) {
        endStream();
        if (res.status === 422 && data.fields) for (const [f, m] of Object.entries(data.fields)) setError(f, m);
        else if (res.status === 402) showRunError({ kind: "monthly_budget", message: data.error });
        else showRunError({ kind: "server", message: data.error || `Knobs answered ${res.status}.` });
        return;
      }
      ranNow(spec);
      state.lastSpec = spec;
      state.shape = promptShape(spec && spec.endpoint, spec && spec.body);
      startOutput(data.id);
      stream.listen(data.events);
    }
    if (!$('[data-panel="code"]').hidden) loadCode();
  }

  // ranNow records that spec was run: the editor holds no unsaved change
  // until it is edited again.
  function ranNow(spec) {
    state.ran = state.baseline = fingerprintOf(spec);
  }

  // restoreRun shows a run's stored answer (or follows it, if it is still
  // running) in the output: the answer is still there when the user comes
  // back from another page.
  function restoreRun(id) {
    const { spec } = buildSpec();
    state.lastSpec = spec;
    state.shape = promptShape(spec.endpoint, spec.body);
    const stream = newStream();
    state.stream = stream;
    setRunning(true);
    startOutput(id);
    state.run.restored = true;
    stream.listen(`/runs/${id}/events`);
    // The page counts as busy until the answer is back on screen.
    busy(() => new Promise((resolve) => (state.restoring = resolve)));
  }

  function restored() {
    if (state.restoring) state.restoring();
    state.restoring = null;
  }

  // resetOutput empties the output: no run is shown.
  function resetOutput() {
    restored();
    for (const c of state.choices) if (c.cancelSwap) c.cancelSwap();
    if (state.ending) state.ending.close();
    state.ending = null;
    state.run = null;
    state.lastRunId = 0;
    state.choices = [];
    state.answer = null;
    ui.choices.innerHTML = `<p class="muted empty">Press Run to see the answer stream in here.</p>`;
    ui.metrics.textContent = "";
    ui.rawEvents.textContent = "";
    ui.rawRequest.textContent = "Nothing sent yet.";
    ui.rawResponse.textContent = "Shown when the run ends.";
    hideRunError();
    ui.addBtn.disabled = true;
    ui.regenBtn.disabled = true;
    ui.reply.hidden = true;
  }

  function setRunning(on) {
    ui.newBtn.disabled = on;
    ui.runBtn.disabled = on;
    ui.stopBtn.disabled = !on;
    root.classList.toggle("running", on);
  }

  function endStream() {
    if (state.stream) state.stream.close();
    state.stream = null;
    setRunning(false);
  }

  function startOutput(id) {
    for (const c of state.choices) if (c.cancelSwap) c.cancelSwap(); // a previous answer still going in
    state.run = { id, done: false, raw: [], rawCount: 0, status: "" };
    state.lastRunId = id;
    state.choices = [];
    writes.clear();
    state.metrics = null;
    state.answer = null;
    ui.choices.textContent = "";
    ui.metrics.textContent = "";
    ui.rawEvents.textContent = "";
    ui.rawRequest.textContent = "Sending…";
    ui.rawResponse.textContent = "Shown when the run ends.";
    ui.regenBtn.disabled = true;
    ui.addBtn.disabled = true;
    ui.reply.hidden = true;
  }

  // choice returns the output of choice i; its elements are made in the
  // next frame's flush, with the other writes.
  function choice(i) {
    while (state.choices.length <= i) {
      state.choices.push({ el: null, content: "", reasoning: "", pending: "", pendingThink: "", logprobs: [], tokens: [], tools: {}, html: "" });
    }
    return state.choices[i];
  }

  function makeChoice(c, n) {
    const el = document.createElement("article");
    el.className = "choice";
    el.innerHTML = `
        <header class="choice-head"><span class="choice-index"></span><span class="finish"></span>
          <button type="button" class="link use-choice" hidden>Add this answer to the conversation</button>
          <button type="button" class="copy copy-answer" title="Copy the answer's text">Copy</button></header>
        <details class="thinking" hidden><summary>Thinking</summary><div class="thinking-text"></div></details>
        <div class="tool-calls"></div>
        <div class="content streaming"></div>
        <div class="json-check" hidden></div>`;
    $(".choice-index", el).textContent = choiceLabel(state.shape, n);
    c.el = el;
    c.text = new TextBlocks($(".content", el));
    c.think = new TextBlocks($(".thinking-text", el));
    ui.choices.appendChild(el);
    ui.choices.classList.toggle("multi", state.choices.length > 1);
  }

  // flush writes what arrived since the last frame, then the writes
  // queued with later: every DOM write of a stream happens there, one
  // batch per frame. The scroll position is read, and the page scrolled,
  // before any write: a read after a write would force a layout of the
  // whole output every frame.
  const writes = new FrameWrites(flush);
  const later = (fn) => writes.later(fn);
  function flush() {
    follower.read();
    follower.scroll();
    state.choices.forEach((c, n) => {
      if (!c.el) makeChoice(c, n);
      if (c.pending) {
        c.text.append(c.pending);
        c.pending = "";
      }
      if (c.pendingThink) {
        const t = $(".thinking", c.el);
        if (t.hidden) {
          t.hidden = false;
          t.open = true;
        }
        c.think.append(c.pendingThink);
        c.pendingThink = "";
      }
    });
    if (state.metrics) {
      showMetrics(state.metrics, null);
      state.metrics = null;
    }
    if (state.run && state.run.raw.length) {
      ui.rawEvents.append(state.run.raw.join(""));
      state.run.raw = [];
    }
  }
  const follower = new Follower(document.scrollingElement || document.documentElement);

  function rawEvent(type, data) {
    if (!state.run) return;
    if (++state.run.rawCount > 5000) return; // the run's page in history keeps them all
    state.run.raw.push(`event: ${type}\ndata: ${data}\n\n`);
  }

  // newStream reads a run's events into the page. A delta may carry many
  // tokens (the server merges them): nothing here counts events.
  function newStream() {
    const on = (type, fn) => (data) => {
      if (!state.run || (stream !== state.stream && stream !== state.ending)) return;
      const parsed = typeof data === "string"; // or a part of a texts event, parsed
      rawEvent(type, parsed ? data : JSON.stringify(data));
      fn(parsed ? JSON.parse(data) : data);
      writes.schedule();
    };
    const stream = new EventStream({
      final: "rendered",
      settles: ["done"],
      resume: (last) => `/runs/${state.run.id}/events?after=${encodeURIComponent(last || "0")}`,
      lost: () => {
        if (state.stream !== stream) return;
        endStream();
        if (state.run && state.run.restored && !state.run.done) {
          resetOutput(); // the run is gone (purged, deleted): nothing to show again
          saveState();
          return;
        }
        showRunError({ kind: "network", message: "The connection to Knobs was lost. The run was stored with whatever had arrived; run again when Knobs is back." });
      },
      handlers: {
        request: on("request", (d) => later(() => showRawRequest(d))),
        delta: on("delta", (d) => {
          const c = choice(d.choice);
          c.content += d.text;
          c.pending += d.text;
        }),
        reasoning: on("reasoning", (d) => {
          const c = choice(d.choice);
          c.reasoning += d.text;
          c.pendingThink += d.text;
        }),
        tool_call: on("tool_call", (d) => {
          const c = choice(d.choice);
          later(() => toolCard(c, d.call));
        }),
        logprobs: on("logprobs", (d) => choice(d.choice).logprobs.push(...d.tokens)),
        metrics: on("metrics", (d) => (state.metrics = d)),
        // The provider's labels of its answer, shown under the metrics.
        response: on("response", (d) => {
          state.answer = d;
          later(() => showAnswerLabels(ui.metrics, state.answer));
        }),
        // Raw token ids (return_raw_tokens): kept per choice, shown at the end.
        tokens: on("tokens", (d) => choice(d.choice).tokens.push(...(d.tokens || []))),
        error: on("error", (d) => later(() => showRunError(d))),
        done: on("done", (d) => {
          state.run.done = true;
          later(() => finish(d));
        }),
        // The answer rendered as HTML follows done: the text is already
        // on screen, and its formatting follows when the server has it.
        rendered: on("rendered", (d) => {
          const run = state.run;
          later(() => {
            if (state.run !== run) return;
            state.choices.forEach((c, i) => {
              c.html = d.html ? d.html[i] || "" : "";
              renderChoice(c, c.check);
            });
          });
        }),
      },
    });
    return stream;
  }

  async function stop() {
    if (!state.run || state.run.done) return;
    ui.stopBtn.disabled = true;
    await postJSON(`/runs/${state.run.id}/cancel`).catch(() => {});
  }

  function toolCard(c, call) {
    let card = c.tools[call.index];
    if (!card) {
      card = document.createElement("div");
      card.className = "tool-card";
      card.innerHTML = `<div class="tool-name"></div><pre class="tool-args"></pre>`;
      $(".tool-calls", c.el).appendChild(card);
      c.tools[call.index] = card;
    }
    card.dataset.call = JSON.stringify(call);
    $(".tool-name", card).textContent = `🔧 ${call.name || "…"}${call.id ? "  (" + call.id + ")" : ""}`;
    $(".tool-args", card).textContent = prettyJSON(call.arguments);
  }

  function prettyJSON(s) {
    try {
      return JSON.stringify(JSON.parse(s), null, 2);
    } catch {
      return s;
    }
  }

  function showMetrics(m, done) {
    ui.metrics.replaceChildren(metricsList(m, done, { details: true, runId: done && state.run ? state.run.id : 0 }));
    showAnswerLabels(ui.metrics, state.answer);
  }

  // showRawRequest shows the request as sent, and names the fields Knobs
  // put in the body itself, so that they are not taken for the user's.
  function showRawRequest(d) {
    ui.rawRequest.textContent = JSON.stringify(d, null, 2);
    let note = ui.rawRequest.previousElementSibling;
    if (!note || !note.classList.contains("added")) {
      note = document.createElement("p");
      note.className = "hint added";
      ui.rawRequest.before(note);
    }
    const added = (d && d.added) || [];
    note.hidden = added.length === 0;
    note.textContent = added.length ? `Added by Knobs, not by you: ${added.join(", ")}. Knobs streams by design; set stream to false for one JSON answer.` : "";
  }

  // finish shows the run's ending; it runs in a frame's flush, after the
  // last text was written.
  function finish(d) {
    if (!state.run) return;
    state.run.status = d.status;
    // The stream stays open for the rendered answer that follows done.
    state.ending = state.stream;
    state.stream = null;
    setRunning(false);
    showMetrics(d.metrics, d);
    loadRawResponse(state.run.id);
    if (state.choices.length === 0) makeChoice(choice(0), 0);
    state.choices.forEach((c, i) => {
      $(".finish", c.el).textContent = d.finish_reasons && d.finish_reasons[i] ? d.finish_reasons[i] : "";
      c.check = d.checks ? d.checks[i] : null;
      renderChoice(c, c.check);
      if (c.logprobs.length) c.el.append(logprobTable(c.logprobs));
      if (c.tokens.length) c.el.append(rawTokens(c.tokens));
      $(".use-choice", c.el).hidden = state.choices.length < 2 || i === 0;
      if (!c.reasoning) $(".thinking", c.el).hidden = true;
      else $(".thinking", c.el).open = false;
    });
    if (d.status === "cancelled") {
      const note = document.createElement("p");
      note.className = "muted stopped";
      note.textContent = "Stopped. The partial answer is kept in history.";
      ui.choices.appendChild(note);
    }
    // The answer stays in the output: Run runs the prompt as it stands.
    // Adding it to the conversation (or replying) is the user's choice.
    const chat = state.lastSpec && state.lastSpec.endpoint === "chat";
    const answered = state.choices[0] && (state.choices[0].content || Object.keys(state.choices[0].tools).length);
    ui.addBtn.disabled = !(chat && answered);
    if (state.run.restored && answered) {
      // Shown again after a visit elsewhere: if the answer was added to
      // the conversation then, it is the last message now.
      const last = $$(".message", ui.messages).pop();
      if (last && $("[data-role]", last).value === "assistant" && textOf($("[data-content]", last)) === state.choices[0].content) {
        state.run.added = last;
        ui.addBtn.disabled = true;
      }
    }
    ui.reply.hidden = !(chat && answered);
    ui.regenBtn.disabled = !chat;
    changed();
    saveState(); // the run the output shows, for when the user comes back
    restored();
  }

  // loadRawResponse shows the provider's bytes once the runner has stored them.
  async function loadRawResponse(id, tries = 0) {
    const res = await fetch(`/runs/${id}/raw`).catch(() => null);
    if (!res || !res.ok || !state.run || state.run.id !== id) return;
    const text = await res.text();
    if (text === "" && tries < 5) {
      setTimeout(() => loadRawResponse(id, tries + 1), 200);
      return;
    }
    ui.rawResponse.textContent = text || "The provider sent no body.";
  }

  function renderChoice(c, check) {
    const box = $(".content", c.el);
    if (c.cancelSwap) c.cancelSwap();
    c.cancelSwap = null;
    const raw = ui.showRaw.checked;
    if (check && check.json) {
      box.className = "content json";
      box.textContent = prettyJSON(c.content);
      const j = $(".json-check", c.el);
      j.hidden = false;
      j.className = "json-check " + (check.valid ? "ok" : "bad");
      j.textContent = check.valid ? "✓ " + check.message : "✗ " + check.message;
    } else if (c.logprobs.some((t) => !t.part) && !raw) {
      // The answer's own tokens (an echoed prompt's too), shaded by
      // probability; reasoning and refusal tokens are in the table only.
      box.className = "content logprobs";
      box.textContent = "";
      for (const t of c.logprobs) {
        if (t.part) continue;
        const span = document.createElement("span");
        span.className = "tok";
        // The first token of an echoed prompt has no logprob: nothing
        // precedes it. Shown as a certainty it would read 100%.
        if (t.no_logprob) span.classList.add("no-logprob");
        else span.style.setProperty("--p", Math.exp(t.logprob).toFixed(3));
        span.textContent = t.token;
        span.title = probText(t) + (t.top_logprobs || []).map((a) => `\n${JSON.stringify(a.token)}  ${probText(a)}`).join("");
        box.appendChild(span);
      }
    } else if (c.html && !raw) {
      // A long answer's HTML goes in over a few frames; the streamed text
      // (still "streaming": pre-wrap) stays on screen until it is all in.
      c.cancelSwap = swapHTML(box, c.html, () => {
        c.cancelSwap = null;
        box.className = "content md";
        codeCopyButtons(box);
      });
    } else if (box.classList.contains("streaming")) {
      box.className = "content plain"; // the streamed blocks are the text
    } else {
      box.className = "content plain";
      box.textContent = "";
      new TextBlocks(box).append(c.content);
    }
    // Tool results: a form under each call, to answer and continue.
    for (const card of Object.values(c.tools)) {
      if ($("form", card) || !state.run || !state.run.done) continue;
      const call = JSON.parse(card.dataset.call);
      const f = document.createElement("form");
      f.className = "tool-result";
      const id = "tr-" + Math.random().toString(36).slice(2, 8);
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = "Result of " + call.name; // the model's words: text, never markup
      const area = document.createElement("textarea");
      area.id = id;
      area.rows = 2;
      area.spellcheck = false;
      area.placeholder = '{"temperature": 21}';
      const submit = document.createElement("button");
      submit.type = "submit";
      submit.textContent = "Add result and continue";
      f.append(label, area, submit);
      f.addEventListener("submit", (e) => {
        e.preventDefault();
        // The call is the assistant's turn: it goes into the conversation
        // first, then its result.
        if (!state.run.added) addToConversation(state.choices.indexOf(c));
        const row = messageRow({ role: "tool", tool_call_id: call.id || "", content: $("textarea", f).value });
        ui.messages.appendChild(row);
        changed();
        run();
      });
      card.appendChild(f);
    }
  }

  function probText(t) {
    return t.no_logprob ? "no logprob" : `${(Math.exp(t.logprob) * 100).toFixed(1)}%`;
  }

  // logprobTable lists a choice's tokens as the run page does: the
  // probability, the logprob, where the token starts and the alternatives.
  function logprobTable(lps) {
    const d = document.createElement("details");
    d.className = "logprobs";
    d.innerHTML = `<summary></summary><table class="logprob-table"><thead><tr><th>Token</th><th>Probability</th><th>Logprob</th><th>Offset</th><th>Alternatives</th></tr></thead><tbody></tbody></table>`;
    $("summary", d).textContent = `Logprobs (${lps.length} tokens)`;
    const rows = document.createDocumentFragment();
    for (const t of lps) {
      const tr = document.createElement("tr");
      if (t.part) tr.className = "part-" + t.part;
      const cell = (text) => {
        const td = document.createElement("td");
        td.textContent = text;
        tr.append(td);
        return td;
      };
      const first = cell("");
      const code = document.createElement("code");
      code.textContent = t.token; // the model's text: never markup
      first.append(code);
      if (t.part) {
        const badge = document.createElement("span");
        badge.className = "badge";
        badge.textContent = t.part;
        first.append(" ", badge);
      }
      if (t.bytes && t.bytes.length) {
        const b = document.createElement("span");
        b.className = "muted bytes";
        b.textContent = " bytes " + t.bytes.join(" ");
        first.append(b);
      }
      cell(probText(t));
      cell(t.no_logprob ? "—" : String(t.logprob));
      cell(t.text_offset == null ? "" : String(t.text_offset));
      cell((t.top_logprobs || []).map((a) => `${JSON.stringify(a.token)} ${probText(a)}` + (a.bytes && a.bytes.length ? ` (bytes ${a.bytes.join(" ")})` : "")).join(" · "));
      rows.append(tr);
    }
    $("tbody", d).append(rows);
    return d;
  }

  ui.showRaw.addEventListener("change", () => {
    if (state.run && state.run.done) state.choices.forEach((c) => renderChoice(c, null));
  });

  function appendAnswer(c) {
    const msg = { role: "assistant", content: c.content };
    if (c.reasoning) msg.reasoning = c.reasoning;
    const calls = Object.values(c.tools).map((card) => JSON.parse(card.dataset.call));
    if (calls.length) msg.tool_calls = calls.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } }));
    const row = messageRow(msg);
    ui.messages.appendChild(row);
    $$("textarea", row).forEach((t) => (t.value.length > 8000 ? fillWhenSeen(t) : autosize(t)));
  }

  // A textarea lays out all of its text, and a long answer's text takes
  // Blink ~100 ms: more than a frame, at the moment the answer ends. A
  // long answer's textarea is filled when it comes into view (or gets the
  // focus) instead; until then textOf reads the text kept aside. It gets
  // the largest height autosize would give, without reading any layout.
  const unseen = new IntersectionObserver((entries) => entries.forEach((e) => e.isIntersecting && fill(e.target)));
  function fillWhenSeen(t) {
    t.deferred = t.value;
    t.value = "";
    t.style.height = "480px";
    t.addEventListener("focus", () => fill(t), { once: true });
    unseen.observe(t);
  }
  function fill(t) {
    unseen.unobserve(t);
    if (t.deferred === undefined) return;
    t.value = t.deferred;
    delete t.deferred;
  }
  function textOf(t) {
    return t.deferred !== undefined ? t.deferred : t.value;
  }

  // addToConversation puts choice idx of the last run into the
  // conversation as the assistant's turn, once: adding another choice
  // replaces it.
  function addToConversation(idx) {
    if (!state.run || !state.run.done || !state.choices[idx]) return;
    if (state.run.added) state.run.added.remove();
    appendAnswer(state.choices[idx]);
    state.run.added = $$(".message", ui.messages).pop();
    ui.addBtn.disabled = true;
    changed();
  }

  ui.addBtn.addEventListener("click", () => addToConversation(0));
  ui.choices.addEventListener("click", (e) => {
    const copy = e.target.closest(".copy-answer, .code-copy");
    if (copy) {
      if (copy.classList.contains("code-copy")) copyText(copy.nextElementSibling.textContent, copy, copy.nextElementSibling);
      else {
        const c = state.choices.find((c) => c.el && c.el.contains(copy));
        if (c) copyText(c.content, copy, $(".content", c.el));
      }
      return;
    }
    const b = e.target.closest(".use-choice");
    if (!b) return;
    addToConversation(state.choices.findIndex((c) => c.el.contains(b)));
  });
  // Reply: the answer goes into the conversation (if it is not there
  // yet), then the next user turn, and it runs.
  ui.reply.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = ui.replyText.value;
    if (!text.trim()) {
      ui.replyText.focus();
      return;
    }
    if (!state.run.added) addToConversation(0);
    const row = messageRow({ role: "user", content: text });
    ui.messages.appendChild(row);
    ui.replyText.value = "";
    changed();
    run();
  });

  // regenerate runs the prompt again; an answer of the last run already
  // added to the conversation is taken out first, so the same turn is
  // asked again.
  function regenerate() {
    if (state.run && state.run.added) {
      state.run.added.remove();
      state.run.added = null;
      changed();
    }
    run();
  }

  // ---------- errors ----------

  // showBudget shows the warning of a monthly budget a run's answer
  // carries; an answer without one leaves the banner as it is, and a
  // refusal's message is shown as the run's error.
  function showBudget(res) {
    const warning = res.headers.get("X-Knobs-Budget-Warning");
    const banner = $("#pg-budget");
    if (!warning || !banner) return;
    banner.textContent = warning;
    banner.hidden = false;
  }

  function showRunError(d) {
    showErrorIn(ui.error, d);
    if (d.kind === "validation" && d.field) setError(d.field, d.message);
  }
  function hideRunError() {
    hideErrorIn(ui.error);
  }

  // ---------- tabs and code ----------

  $$("[data-tab]").forEach((tab) =>
    tab.addEventListener("click", () => {
      $$("[data-tab]").forEach((t) => t.setAttribute("aria-selected", String(t === tab)));
      $$("[data-panel]").forEach((p) => (p.hidden = p.dataset.panel !== tab.dataset.tab));
      if (tab.dataset.tab === "code") loadCode();
    }),
  );

  async function loadCode() {
    const { spec, errors } = buildSpec();
    if (Object.keys(errors).length) return;
    const res = await postJSON("/playground/code", spec);
    const data = await res.json().catch(() => ({}));
    ui.code.textContent = "";
    if (!res.ok) {
      ui.code.textContent = data.error || "No code for this request.";
      return;
    }
    for (const s of data.snippets || []) {
      const d = document.createElement("details");
      d.open = s.lang === "curl";
      d.innerHTML = `<summary></summary><button type="button" class="copy">Copy</button><pre class="raw"></pre>`;
      $("summary", d).textContent = s.label;
      $("pre", d).textContent = s.code;
      $(".copy", d).addEventListener("click", (e) => copyText(s.code, e.currentTarget, $("pre", d)));
      ui.code.appendChild(d);
    }
    if (data.note) {
      const p = document.createElement("p");
      p.className = "hint";
      p.textContent = data.note;
      ui.code.appendChild(p);
    }
  }

  // ---------- keys ----------

  ui.runBtn.addEventListener("click", run);
  ui.stopBtn.addEventListener("click", stop);
  ui.regenBtn.addEventListener("click", regenerate);
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]")) return; // the page is asking: keys are the dialog's
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    } else if (e.key === "Escape" && state.stream) {
      e.preventDefault();
      stop();
    }
  });

  // ---------- start ----------

  let saved = {};
  try {
    saved = JSON.parse(root.dataset.spec);
    applySpec(saved);
  } catch {
    renderMessages([{ role: "user", content: "" }]);
  }
  renderVariables();
  showPreset();
  // What the page saved as clean is fingerprinted again as the editor
  // reads it back, so that a round trip through the page is no change.
  const fp = fingerprint();
  state.baseline = saved.unsaved ? saved.baseline || "" : fp;
  state.ran = saved.ran && !saved.unsaved && saved.ran === saved.baseline ? fp : saved.ran || "";
  const pending = $("#pg-pending");
  if (pending) {
    // Esc keeps the user's work, as "Keep mine" does.
    pending.addEventListener("cancel", (e) => {
      e.preventDefault();
      $("[data-keep]", pending).click();
    });
    state.asking = true;
    pending.showModal();
  }
  if (saved.last_run) restoreRun(saved.last_run);
  showEstimate();
  busy(loadModels);
  // The page's script has set everything up (a module runs after the
  // page is shown): tests and tools wait for this before they type.
  root.dataset.ready = "1";
})();
