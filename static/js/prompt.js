// Knobs: a completion's prompt in an editor, shared by the playground and
// the compare page so that both send and label it the same way.
//
// A completion's prompt is a string, or an array (strings, token ids, or
// arrays of token ids) that the provider answers prompt by prompt. An
// array goes out as the array: sent as its JSON text, it would be one
// prompt that happens to look like JSON.
"use strict";

// readPrompt turns the editor's text, in form ("text": one prompt, "rows":
// a prompt per row, "json": a string or an array in JSON), into the prompt
// to send. What is wrong comes back as error, for the editor to show.
export function readPrompt(text, form) {
  switch (form) {
    case "rows": {
      const rows = text.split(/\r?\n/).filter((r) => r.trim() !== "");
      return rows.length ? { value: rows } : { value: rows, error: "Write at least one prompt: one per row." };
    }
    case "json": {
      let v;
      try {
        v = JSON.parse(text);
      } catch (e) {
        return { error: "This is not valid JSON: " + e.message };
      }
      if (typeof v !== "string" && !Array.isArray(v)) return { error: "A prompt in JSON is a string or an array: strings, token ids, or arrays of token ids." };
      return { value: v };
    }
    default:
      return { value: text };
  }
}

// writePrompt gives the form and text that show p exactly: a string as one
// prompt, strings without line breaks as rows (a blank row is dropped when
// read back, so a blank string needs JSON), any other array as JSON.
export function writePrompt(p) {
  if (p == null || typeof p === "string") return { form: "text", text: p || "" };
  if (Array.isArray(p) && p.length && p.every((x) => typeof x === "string" && x.trim() !== "" && !/[\r\n]/.test(x))) return { form: "rows", text: p.join("\n") };
  return { form: "json", text: JSON.stringify(p) };
}

// promptShape says how many prompts a completion body has and how many
// choices each gets: the provider answers prompt by prompt, n choices
// each, numbering the choices on across prompts. An array of token ids is
// one prompt; an array of strings or of token-id arrays is several.
export function promptShape(endpoint, body) {
  const b = body || {};
  const n = Number.isInteger(b.n) && b.n > 0 ? b.n : 1;
  const p = b.prompt;
  const many = endpoint === "completion" && Array.isArray(p) && p.length > 1 && p.every((x) => typeof x === "string" || Array.isArray(x));
  return { prompts: many ? p.length : 1, n };
}

// choiceLabel names choice i of a run of shape: by its prompt when there
// are several, as the provider's index otherwise.
export function choiceLabel(shape, i) {
  const { prompts, n } = shape || { prompts: 1, n: 1 };
  return prompts > 1 ? `Prompt ${Math.floor(i / n) + 1} · choice ${i % n}` : `Choice ${i}`;
}
