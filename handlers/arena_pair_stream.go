package handlers

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"knobs/arena"
	"knobs/db"
	"knobs/logs"
	"knobs/runner"
	"knobs/web/sse"
)

// arenaStreamEvery is how often a speed demo reads its answers' text: a
// voter watching two answers grow needs no more than a few updates a
// second, and each one masks the text again.
const arenaStreamEvery = 60 * time.Millisecond

// arenaStreamMax bounds the text events of one speed demo's stream: an
// answer's mask changing again and again (each change resends the text
// after it) stops the streaming there, and the pair still ends it.
const arenaStreamMax = 4 << 20

// arenaStreamTail bounds the text a speed demo holds back in an answer
// written without spaces (Chinese, Japanese), where words give no place
// to cut.
const arenaStreamTail = 512

// streamPair answers a speed demo's new pair as an event stream: the
// pair is drawn and its answers made as for GET /a/{token}/pair, in the
// background, while both answers stream side by side as they are
// written. The events carry the answers' text only, masked as the pair
// is, and nothing else of the runs (no model, provider, timing or id):
//
//	event: prompt  {"text"}                 the pair's prompt
//	event: text    {"side","at","text"}     side "a" or "b": its shown text from at (UTF-16 units) is now text
//	event: pair    the pair, as GET answers it   the last event
//	event: problem {"status","error"}       why there is no pair; the last event
//
// A client that leaves does not stop the answers: they are made, the
// pair issued, and the voter's next request gets it.
func (h *Handler) streamPair(c *fiber.Ctx, a db.Arena, cs []db.ArenaContestant, voter string, mine, all []db.ArenaPair, tally VoterTally) error {
	terms := h.arenaMaskTerms(a, cs)
	m, err := arena.NewMasker(terms)
	if err != nil {
		return err
	}
	f := newPairFeed(m, arenaHeldWords(terms))
	done := make(chan struct{})
	// The pair is made in the background; what it logs carries this
	// request's id.
	bg := logs.WithRequestID(h.background, logs.RequestID(ctx(c)))
	h.goBackground(func() {
		defer close(done)
		p, err := h.drawPair(bg, a, cs, voter, mine, all, f.watch)
		// The answers' last words, read from their finished runs: the
		// stream shows each answer whole before the pair.
		f.read()
		if err == nil {
			var out PairAnswer
			if out, err = h.pairAnswer(bg, a, cs, p, false); err == nil {
				out.Votes = tally
				f.end("pair", out)
				return
			}
		}
		var pr *Problem
		if !errors.As(err, &pr) {
			h.log.ErrorContext(bg, "making a speed demo's pair", "arena", a.ID, "err", err)
			pr = &Problem{Status: fiber.StatusInternalServerError, Message: "Knobs could not make this pair; try again."}
		}
		f.end("problem", fiber.Map{"status": pr.Status, "error": pr.Message})
	})
	left := make(chan struct{})
	var leaveOnce sync.Once
	h.goBackground(func() { f.pump(done, left) })
	c.Set(fiber.HeaderCacheControl, "no-store")
	return h.serveEvents(c, f, 0, func() { leaveOnce.Do(func() { close(left) }) })
}

// arenaHeldWords is how many words at the end of a streaming answer wait
// for what follows before they are masked and shown: a name with its
// version ("Claude 3.5 Sonnet") or the longest of the arena's terms, and
// one more, so that a name is never shown half written.
func arenaHeldWords(terms []string) int {
	n := 3
	for _, t := range terms {
		words := len(strings.FieldsFunc(t, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("-_.:", r) }))
		n = max(n, words+1)
	}
	return min(n, 40)
}

// settledText is the part of a streaming answer (masked) that is shown:
// all of it once its run has finished, else all but its last words (held
// words), since a name may still be coming in pieces ("Aurora Bor") that
// the masker will hide only once whole. Text without spaces holds back at
// most arenaStreamTail bytes, cut before a run of Latin letters and
// digits.
func settledText(s string, finished bool, held int) string {
	if finished {
		return s
	}
	// Spaces at the end end a word; they are no word of their own.
	cut := len(strings.TrimRightFunc(s, unicode.IsSpace))
	for range held {
		i := strings.LastIndexFunc(s[:cut], unicode.IsSpace)
		if i < 0 {
			cut = 0
			break
		}
		cut = len(strings.TrimRightFunc(s[:i], unicode.IsSpace))
	}
	if len(s)-cut > arenaStreamTail {
		at := len(s) - arenaStreamTail
		for at > 0 && !utf8.RuneStart(s[at]) {
			at--
		}
		for at > 0 && nameByte(s[at-1]) {
			at--
		}
		cut = max(cut, at)
	}
	return s[:cut]
}

// nameByte says whether b may be part of a model's name or version.
func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("-_.:", b) >= 0
}

// pairSide is one answer of a speed demo as it streams.
type pairSide struct {
	run  *runner.Run
	read int             // the run's frames read
	raw  strings.Builder // its text so far, as written
	sent string          // its text as shown, masked
	// ended is whether the run had finished at the last read: a read
	// with no new frames and no end changes nothing, so the whole
	// answer is not masked again on every tick.
	ended bool
}

// pairFeed is a speed demo's stream: the events of one pair as it is
// made. It is an sse.Source.
type pairFeed struct {
	masker *arena.Masker
	held   int

	mu       sync.Mutex
	frames   [][]byte
	size     int // the frames' bytes
	finished bool
	changed  chan struct{} // closed when frames grow
	prompt   string
	sides    map[string]*pairSide
}

func newPairFeed(m *arena.Masker, held int) *pairFeed {
	return &pairFeed{masker: m, held: held, changed: make(chan struct{}), sides: map[string]*pairSide{}}
}

// Frames implements sse.Source.
func (f *pairFeed) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	after = max(after, 0)
	var out [][]byte
	if after < len(f.frames) {
		out = f.frames[after:len(f.frames):len(f.frames)]
	}
	return out, f.finished, f.changed
}

// add appends an event; the caller holds f.mu.
func (f *pairFeed) add(event string, data any) {
	if f.finished {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	frame := "id: " + strconv.Itoa(len(f.frames)+1) + "\nevent: " + event + "\ndata: " + string(b) + "\n\n"
	f.frames = append(f.frames, []byte(frame))
	f.size += len(frame)
	close(f.changed)
	f.changed = make(chan struct{})
}

// watch is the answerWatch of the pair being drawn: a new run on a side
// starts that side again (a matchup drawn again after a conflict).
func (f *pairFeed) watch(prompt, side string, run *runner.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if prompt != f.prompt {
		f.prompt = prompt
		f.add("prompt", fiber.Map{"text": prompt})
	}
	if old := f.sides[side]; old != nil && old.sent != "" {
		f.add("text", fiber.Map{"side": side, "at": 0, "text": ""})
	}
	f.sides[side] = &pairSide{run: run}
}

// end sends the last event and finishes the stream.
func (f *pairFeed) end(event string, data any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.add(event, data)
	f.finished = true
}

// pump reads the answers' text every arenaStreamEvery until the pair is
// made (done) or the voter has left.
func (f *pairFeed) pump(done, left <-chan struct{}) {
	tick := time.NewTicker(arenaStreamEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-left:
			return
		case <-tick.C:
			f.read()
		}
	}
}

// read takes what each side's run has written since the last read and
// sends what it changes of the side's shown text.
func (f *pairFeed) read() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range []string{"a", "b"} {
		s := f.sides[name]
		if s == nil || f.size > arenaStreamMax {
			continue
		}
		frames, finished, _ := s.run.Frames(s.read)
		if len(frames) == 0 && finished == s.ended {
			continue
		}
		s.read += len(frames)
		s.ended = finished
		for _, fr := range frames {
			event, data := sse.FrameParts(fr)
			if string(event) != "delta" {
				continue
			}
			var d struct {
				Choice int    `json:"choice"`
				Text   string `json:"text"`
			}
			if json.Unmarshal(data, &d) == nil && d.Choice == 0 && s.raw.Len() < arenaAnswerMax {
				s.raw.WriteString(clipBytes(d.Text, arenaAnswerMax-s.raw.Len()))
			}
		}
		// Masked whole, so that a name already written is masked however
		// the cut falls; then its last words held back, which may be a
		// name still being written.
		shown := settledText(f.masker.Mask(s.raw.String()), finished, f.held)
		if shown == s.sent {
			continue
		}
		same := commonPrefix(s.sent, shown)
		f.add("text", fiber.Map{"side": name, "at": utf16Len(shown[:same]), "text": shown[same:]})
		s.sent = shown
	}
}

// commonPrefix is the length in bytes of the longest common prefix of a
// and b that ends on a rune boundary.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// utf16Len is the length of s in UTF-16 code units, as a page's script
// counts a string.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

var _ sse.Source = (*pairFeed)(nil)
