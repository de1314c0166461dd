// Knobs streams: what the playground and the compare page share to read a
// run's (or a comparison's) events and to show streamed text cheaply.
//
// A run starts with one request: POST answers the event stream itself
// (read here with fetch and a stream reader), so the first token costs one
// round trip instead of two. If that stream breaks before its last event,
// the page reconnects with an EventSource that resumes exactly after the
// last event id it saw. A server that answers the POST with JSON
// ({"id","events"}) is read with an EventSource, as before.

// SSEParser turns the text of an event stream into events, as the
// EventSource specification reads it: "id", "event" and "data" fields,
// comments (lines starting with ":"), data over several lines, and any of
// CRLF, CR or LF as line ends, even when a chunk ends between CR and LF.
export class SSEParser {
  constructor(dispatch) {
    this.dispatch = dispatch; // called with (type, data, lastId)
    this.rest = ""; // an unfinished line
    this.skipLF = false; // the last chunk ended with CR: a leading LF belongs to it
    this.type = "";
    this.data = [];
    this.lastId = "";
  }

  feed(chunk) {
    const text = this.rest + chunk;
    if (text === "") return;
    let pos = 0;
    if (this.skipLF && text.startsWith("\n")) pos = 1;
    this.skipLF = false;
    const eol = /\r\n|\r|\n/g;
    eol.lastIndex = pos;
    for (let m; (m = eol.exec(text)); pos = eol.lastIndex) {
      if (m[0] === "\r" && eol.lastIndex === text.length) this.skipLF = true;
      this.line(text.slice(pos, m.index));
    }
    this.rest = text.slice(pos);
  }

  line(line) {
    if (line === "") {
      // A blank line ends the event; one without data is no event.
      if (this.data.length) this.dispatch(this.type || "message", this.data.join("\n"), this.lastId);
      this.type = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return; // a comment: the server's keep-alive
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.type = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
  }
}

// The streams a page holds open, for the back/forward cache below.
const live = new Set();

// Chromium's back/forward cache keeps a connection open after the page is
// left; close it, so that the runner can stop a run nobody watches. Back
// from the cache, read on from the last event seen.
window.addEventListener("pagehide", () => live.forEach((s) => s.detach()));
window.addEventListener("pageshow", (e) => {
  if (e.persisted) live.forEach((s) => s.reattach());
});

// EventStream reads one stream of events into handlers, from a POST that
// answers the stream itself or from an EventSource, and reconnects when
// the stream breaks before its final event.
//
// handlers: {type: (data, id) => void}, data as the text of the event,
// or, for a part of a "texts" event (several choices' or panes' text
// merged), the part already parsed.
// final: the event type that ends the stream ("rendered", "group_done").
// settles: event types after which the stream may end on its own without
// being broken: a run's done is followed by its rendered answer, but a
// run stored before Knobs rendered after done, or one whose ending
// could not be stored, ends at done.
// resume: lastId => the URL that streams the events after lastId, or
// null when the stream cannot be resumed (a paced replay): then the
// EventSource reconnects on its own, as it always did.
// lost: called once when the stream cannot be read any more.
export class EventStream {
  constructor({ handlers, final, settles = [], resume = null, lost = () => {} }) {
    this.handlers = handlers;
    this.final = final;
    this.settles = settles;
    this.settled = false; // an event of settles arrived
    this.resume = resume;
    this.lost = lost;
    this.lastId = "";
    this.transport = null; // the AbortController or EventSource reading now
    this.ended = false; // the final event arrived, or close() was called
    this.detached = false;
    this.retries = 0;
    this.timer = 0;
  }

  // isStream says whether a response to post() is the event stream.
  static isStream(res) {
    return res.ok && /^text\/event-stream/i.test(res.headers.get("Content-Type") || "") && !!res.body;
  }

  // post sends a request that may answer with the stream. It returns the
  // response: when EventStream.isStream(res), the caller prepares the page
  // and calls read(res); otherwise the answer is JSON, to read as before.
  async post(url, body, headers = {}) {
    const ctl = new AbortController();
    this.transport = ctl;
    live.add(this);
    try {
      return await fetch(url, {
        method: "POST",
        headers: Object.assign({}, headers, { Accept: "text/event-stream" }),
        body,
        signal: ctl.signal,
      });
    } catch (e) {
      if (this.transport === ctl) this.transport = null;
      throw e;
    }
  }

  // read dispatches the events of a streamed response until it ends.
  async read(res) {
    const ctl = this.transport;
    if (!(ctl instanceof AbortController)) return; // closed meanwhile
    const reader = res.body.getReader();
    const text = new TextDecoder();
    const parser = new SSEParser((type, data, id) => this.dispatch(type, data, id));
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.transport !== ctl) break;
        parser.feed(text.decode(value, { stream: true }));
      }
    } catch {
      // A network error, or our own abort: told apart below.
    }
    if (this.transport !== ctl) return; // aborted by close() or detach()
    reader.cancel().catch(() => {});
    this.transport = null;
    if (this.settled) this.close();
    else if (!this.ended) this.reconnect();
  }

  // listen reads url with an EventSource.
  listen(url) {
    const es = new EventSource(url);
    this.transport = es;
    live.add(this);
    for (const type of [...Object.keys(this.handlers), "texts"]) {
      es.addEventListener(type, (e) => {
        // The connection's own "error" event shares its name with ours and has no data.
        if (e.data === undefined || this.transport !== es) return;
        this.dispatch(type, e.data, e.lastEventId);
      });
    }
    es.onerror = () => {
      if (this.transport !== es) return;
      if (this.settled) {
        this.close(); // the stream ended after its run's done
      } else if (es.readyState === EventSource.CLOSED) {
        // Refused (an error status, or 204: nothing more to send).
        this.transport = null;
        this.fail();
      } else if (this.resume) {
        // The EventSource would reconnect with the id in its URL; open a
        // new one at the last id seen, so that nothing comes twice.
        es.close();
        this.transport = null;
        this.reconnect();
      }
    };
  }

  dispatch(type, data, id) {
    if (this.ended) return;
    if (id) this.lastId = id;
    this.retries = 0;
    if (type === "texts") {
      // The server merged the text of several choices (or panes) that
      // arrived together: each part goes to its kind's handler, parsed.
      let parts = [];
      try {
        parts = JSON.parse(data).parts || [];
      } catch (e) {
        console.error("knobs: a texts event failed", e);
      }
      for (const part of parts) {
        const h = this.handlers[part.event];
        if (!h) continue;
        try {
          h(part, id);
        } catch (e) {
          console.error(`knobs: the ${part.event} part failed`, e);
        }
      }
      return;
    }
    const handler = this.handlers[type];
    if (handler) {
      try {
        handler(data, id);
      } catch (e) {
        console.error(`knobs: the ${type} event failed`, e);
      }
    }
    if (this.settles.includes(type)) this.settled = true;
    if (type === this.final) this.close();
  }

  // reconnect resumes after the last event seen: at once the first time
  // (the server keeps the run), then with growing pauses, five times.
  reconnect() {
    if (this.ended || this.detached) return;
    if (!this.resume || this.retries >= 5) return this.fail();
    const wait = this.retries === 0 ? 0 : 500 * 2 ** this.retries;
    this.retries++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (!this.ended && !this.detached && !this.transport) this.listen(this.resume(this.lastId));
    }, wait);
  }

  fail() {
    if (this.ended) return;
    this.close();
    this.lost();
  }

  // stopTransport ends the connection, whichever it is.
  stopTransport() {
    const t = this.transport;
    this.transport = null;
    clearTimeout(this.timer);
    if (t instanceof AbortController) t.abort();
    else if (t) t.close();
  }

  // close stops reading for good.
  close() {
    this.ended = true;
    this.stopTransport();
    live.delete(this);
  }

  detach() {
    if (this.ended) return;
    this.detached = true;
    this.stopTransport();
  }

  reattach() {
    if (this.ended || !this.detached) return;
    this.detached = false;
    if (this.resume) this.listen(this.resume(this.lastId));
    else this.fail();
  }
}

// Streamed text goes into blocks of about BLOCK characters, cut after a
// newline: appending to one growing Text node costs Blink time (and a
// layout) in proportion to its length, so a long answer would slow every
// frame. A line longer than HARD is cut where it reaches it (the one
// place where the streaming view may break a line early; the text stays
// exact, and the final rendering replaces the blocks).
const BLOCK = 2048;
const HARD = 8192;

// TextBlocks appends text to box in bounded blocks.
export class TextBlocks {
  constructor(box) {
    this.box = box;
    this.node = null; // the Text node of the last block, while it has room
    this.size = 0;
  }

  append(text) {
    while (text) {
      const room = BLOCK - this.size;
      if (text.length <= room) return this.write(text);
      // The last newline that keeps the block within BLOCK, else the first after it.
      let cut = room > 0 ? text.lastIndexOf("\n", room - 1) : -1;
      if (cut < 0) cut = text.indexOf("\n", Math.max(room, 0));
      if (cut < 0 || this.size + cut >= HARD) {
        if (this.size + text.length <= HARD) return this.write(text);
        cut = HARD - this.size - 1;
        if (/[\uD800-\uDBFF]/.test(text[cut])) cut--; // keep a surrogate pair in one block
      }
      this.write(text.slice(0, cut + 1));
      this.node = null;
      this.size = 0;
      text = text.slice(cut + 1);
    }
  }

  write(text) {
    if (!this.node) {
      const block = document.createElement("div");
      block.className = "text-block";
      this.node = document.createTextNode("");
      block.append(this.node);
      this.box.append(block);
    }
    this.node.appendData(text);
    this.size += text.length;
  }
}

// FrameWrites batches a stream's DOM writes into one requestAnimationFrame
// callback per frame, however many events arrive: the page's flush (its
// reads first, then its writes), then every write queued with later.
export class FrameWrites {
  constructor(flush) {
    this.flush = flush;
    this.queued = [];
    this.frame = 0;
  }

  // later runs fn in the next frame's flush.
  later(fn) {
    this.queued.push(fn);
    this.schedule();
  }

  // schedule asks for a flush in the next frame, once.
  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.run());
  }

  run() {
    this.frame = 0;
    this.flush();
    for (const fn of this.queued.splice(0)) fn();
  }

  // clear drops the writes queued for a stream no longer shown.
  clear() {
    this.queued = [];
  }
}

// Follower keeps a scrolling box at its end while the reader follows the
// end, and leaves it alone once they scroll up. It reads the position
// before the frame writes anything (a read after a write forces a layout),
// so the scroll trails the text by one frame.
export class Follower {
  constructor(box) {
    this.box = box; // an element, or the document's scrolling element
    this.top = -1; // where this last scrolled to
    this.following = true;
  }

  // read decides, before any write in the frame, whether to follow.
  read() {
    const b = this.box;
    const max = b.scrollHeight - b.clientHeight;
    const top = b.scrollTop;
    this.following = max - top < 80 || (this.top >= 0 && top >= this.top - 1);
    this.max = max;
    this.at = top;
  }

  // scroll moves to the end read last, if following; it writes no DOM.
  scroll() {
    if (!this.following) {
      this.top = -1;
      return;
    }
    if (this.at < this.max) this.box.scrollTop = this.max;
    this.top = this.max;
  }
}

// formatNumber formats n with digits decimals; building an
// Intl.NumberFormat is costly, so each is built once.
const formats = new Map();
export function formatNumber(n, digits = 0) {
  let f = formats.get(digits);
  if (!f) {
    f = new Intl.NumberFormat(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
    formats.set(digits, f);
  }
  return f.format(Number(n || 0));
}

// swapHTML puts the server's rendered (sanitized) html in box in place of
// its streamed text. The html is parsed away from the page; its top-level
// blocks then go in a few at a time, one batch per animation frame, while
// the streamed text stays on screen, and the page shows the result in one
// last frame. Blocks off screen are skipped by layout (content-visibility
// in knobs.css), so no frame holds a long task however long the answer.
// done runs after the swap. It returns a function that cancels the swap.
export function swapHTML(box, html, done = () => {}) {
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  const nodes = Array.from(tpl.content.childNodes);
  const staged = document.createDocumentFragment();
  let i = 0;
  let frame = requestAnimationFrame(function step() {
    // Moving nodes from the template into the page's document (adopting
    // them) is the costly part of a big insertion: spread it over frames.
    for (let budget = 0; i < nodes.length && budget < 65536; i++) {
      const n = nodes[i];
      budget += n.nodeType === 1 ? 256 + (n.textContent || "").length : 16;
      staged.append(document.adoptNode(n));
    }
    if (i < nodes.length) {
      frame = requestAnimationFrame(step);
      return;
    }
    frame = 0;
    box.replaceChildren(staged);
    done();
  });
  return () => cancelAnimationFrame(frame);
}

// measuredRate is a metrics event's tokens per second as people should
// read it, or "—" when the answer is too short or too quick for a rate
// to mean anything (two tokens a microsecond apart are not 2 million
// tokens/s).
export function measuredRate(m) {
  const span = (m.total_ms || 0) - (m.ttft_ms || 0);
  if (!m.tokens_per_sec || (m.tokens || 0) < 10 || span < 50) return "—";
  return formatNumber(m.tokens_per_sec, 0);
}
