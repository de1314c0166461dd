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
