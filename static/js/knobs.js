// Knobs: the small amount of JavaScript the pages need. Everything works
// without it; it only adds confirmations and conveniences.
"use strict";

// csrfToken returns the page's CSRF token, for fetch() calls.
function csrfToken() {
  const m = document.querySelector('meta[name="csrf-token"]');
  return m ? m.content : "";
}

document.addEventListener("submit", (e) => {
  const form = e.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) e.preventDefault();
});

document.addEventListener("focusin", (e) => {
  if (e.target.matches("[data-select-on-focus]")) e.target.select();
});

// copyText puts text on the clipboard. The async clipboard needs a secure
// context (https or localhost); elsewhere the selected input is copied the
// old way, which still works inside the click that asked for it.
async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!input) return false;
    input.focus();
    input.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    }
  }
}

// Every [data-copy] button copies the input just before it.
document.addEventListener("click", async (e) => {
  const btn = e.target.closest("button[data-copy]");
  if (!btn) return;
  const input = btn.previousElementSibling;
  if (!input || !("value" in input)) return;
  const ok = await copyText(input.value, input);
  btn.textContent = ok ? "Copied" : "Select and copy";
  setTimeout(() => (btn.textContent = "Copy"), 2000);
});

// share makes and revokes the links of a share box (views/share.templ)
// without leaving the page: a new link goes to the top of the list and to
// the clipboard. The server answers these requests with JSON.
async function share(form, submitter) {
  const box = form.closest("[data-share-box]");
  const status = box.querySelector("[data-share-status]");
  const revoking = form.matches("[data-share-revoke]");
  const buttons = Array.from(form.querySelectorAll("button"));
  buttons.forEach((b) => (b.disabled = true));
  const body = revoking ? "{}" : JSON.stringify({ audience: submitter ? submitter.value : "" });
  let res = null;
  let data = {};
  try {
    res = await fetch(form.getAttribute("action"), {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrfToken() },
      body,
    });
    data = await res.json().catch(() => ({}));
  } catch {
    res = null;
  }
  buttons.forEach((b) => (b.disabled = false));
  if (!res || !res.ok) {
    status.classList.add("error");
    status.textContent = data.error || (revoking ? "The link could not be revoked: try again." : "The link could not be made: try again.");
    return;
  }
  status.classList.remove("error");
  if (revoking) {
    const row = form.closest(".share-row");
    const meta = row.querySelector("[data-share-meta]").textContent.trim();
    const gone = document.createElement("span");
    gone.className = "muted";
    gone.textContent = `${meta.replace(" · ", " made ")}, revoked.`;
    row.classList.add("revoked");
    row.replaceChildren(gone);
    status.textContent = "Revoked: the link no longer opens.";
    return;
  }
  const row = box.querySelector("template[data-share-row]").content.firstElementChild.cloneNode(true);
  const input = row.querySelector("[data-share-url]");
  input.value = new URL(data.url, location.origin).href;
  row.querySelector("[data-share-meta]").textContent = `${data.audience === "public" ? "Public link" : "Team link"} · ${data.created}`;
  row.querySelector("form[data-share-revoke]").setAttribute("action", data.revoke);
  box.querySelector("[data-share-list]").prepend(row);
  const copied = await copyText(input.value, input);
  input.focus();
  input.select();
  status.textContent = copied ? "Link made and copied to the clipboard." : "Link made: copy it with the Copy button.";
  if (copied) row.querySelector("[data-copy]").textContent = "Copied";
}

document.addEventListener("submit", (e) => {
  const form = e.target.closest("form[data-share], form[data-share-revoke]");
  if (!form || e.defaultPrevented) return;
  e.preventDefault();
  share(form, e.submitter);
});
