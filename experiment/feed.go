package experiment

import (
	"sync"
	"time"
	"unicode/utf8"

	"knobs/db"
)

// Event is what an experiment's listeners are told: a cell that ended
// ("cell", with the progress after it) or the experiment's end ("end").
type Event struct {
	Seq      int64        `json:"seq"`
	Kind     string       `json:"kind"`
	Cell     *CellSummary `json:"cell,omitempty"`
	Progress *Progress    `json:"progress,omitempty"`
	Status   string       `json:"status,omitempty"`
	Error    string       `json:"error,omitempty"`
}

// CellSummary is a cell as the live grid shows it; the whole output is
// read from the results.
type CellSummary struct {
	ID        int64       `json:"id"`
	Variant   int         `json:"variant"`
	Row       int         `json:"row"`
	Repeat    int         `json:"repeat"`
	Status    string      `json:"status"`
	RunID     int64       `json:"run_id"`
	Output    string      `json:"output" doc:"The answer, its first 2,000 characters."`
	Cut       bool        `json:"output_cut" doc:"The output was longer than what is sent here."`
	LatencyMs float64     `json:"latency_ms"`
	Tokens    int         `json:"tokens"`
	CostUSD   float64     `json:"cost_usd"`
	Error     string      `json:"error"`
	Grades    []GradeItem `json:"grades"`
}

// GradeItem is one grader's verdict on a cell.
type GradeItem struct {
	Grader int     `json:"grader"`
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
	Error  string  `json:"error" doc:"The grader could not grade the cell: neither a pass nor a fail."`
	Judge  int64   `json:"judge_run_id,omitempty" doc:"The judge's own run, in history."`
}

// Progress is how far an experiment has got.
type Progress struct {
	Done        int     `json:"done" doc:"Cells ended, failed ones included."`
	Total       int     `json:"total"`
	Failed      int     `json:"failed"`
	ElapsedMs   float64 `json:"elapsed_ms" doc:"Since this process started or resumed it."`
	CellsPerSec float64 `json:"cells_per_s"`
	RemainingMs float64 `json:"remaining_ms" doc:"At the rate so far; 0 until a cell has ended."`
	SpentUSD    float64 `json:"spent_usd" doc:"The cost of the cells ended here so far, where known."`
}

// summaryOutput bounds the output a cell event carries, in characters.
const summaryOutput = 2000

// cellEvent is the event of a cell that ended.
func cellEvent(c db.Cell) Event {
	s := &CellSummary{ID: c.ID, Variant: c.Variant, Row: c.Row, Repeat: c.Repeat, Status: c.Status, RunID: c.RunID,
		Output: c.Output, LatencyMs: c.LatencyMs, Tokens: c.Tokens, CostUSD: c.CostUSD, Error: c.Error, Grades: GradeItems(c.Grades)}
	if utf8.RuneCountInString(s.Output) > summaryOutput {
		s.Output, s.Cut = string([]rune(s.Output)[:summaryOutput]), true
	}
	return Event{Kind: "cell", Cell: s}
}

// GradeItems are a cell's grades as the API shows them.
func GradeItems(gs []db.CellGrade) []GradeItem {
	out := make([]GradeItem, 0, len(gs))
	for _, g := range gs {
		out = append(out, GradeItem{Grader: g.Grader, Pass: g.Pass, Score: g.Score, Reason: g.Reason, Error: g.Error, Judge: g.JudgeRunID})
	}
	return out
}

// feedKeep bounds the events a feed keeps for listeners that reconnect;
// one further behind reloads the grid from the results.
const feedKeep = 4096

// Feed is a running experiment's events, kept in order with a sequence
// number each, for any number of listeners.
type Feed struct {
	mu      sync.Mutex
	events  []Event // the last feedKeep
	next    int64   // the next event's Seq, from 1
	changed chan struct{}
	closed  bool
	started time.Time
	total   int
	done    int
	failed  int
	spent   float64
	doneNow int // cells ended since started, for the rate
}

func newFeed() *Feed {
	return &Feed{next: 1, changed: make(chan struct{}), started: time.Now()}
}

func (f *Feed) setTotals(total, done, failed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total, f.done, f.failed = total, done, failed
}

// progress is the experiment's progress now; the caller holds f.mu.
func (f *Feed) progress() *Progress {
	p := &Progress{Done: f.done, Total: f.total, Failed: f.failed, SpentUSD: f.spent}
	p.ElapsedMs = float64(time.Since(f.started).Microseconds()) / 1000
	if f.doneNow > 0 && p.ElapsedMs > 0 {
		p.CellsPerSec = float64(f.doneNow) / (p.ElapsedMs / 1000)
		p.RemainingMs = float64(f.total-f.done) / p.CellsPerSec * 1000
	}
	return p
}

// Progress is the experiment's progress now.
func (f *Feed) Progress() Progress {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.progress()
}

func (f *Feed) publish(e Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if e.Cell != nil {
		f.done++
		f.doneNow++
		if e.Cell.Status == db.CellError {
			f.failed++
		}
		f.spent += e.Cell.CostUSD
	}
	e.Progress = f.progress()
	e.Seq = f.next
	f.next++
	f.events = append(f.events, e)
	if len(f.events) > feedKeep {
		f.events = append(f.events[:0:0], f.events[len(f.events)-feedKeep:]...)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Feed) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.changed)
	}
}

// Since answers the events after seq, a channel closed when more come,
// and whether the feed has ended (no more will). lost is true when events
// after seq are no longer kept: the listener reloads the results.
func (f *Feed) Since(seq int64) (events []Event, more <-chan struct{}, ended, lost bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case seq >= f.next && seq > 0:
		// A reader ahead of this feed followed the process before a
		// restart, whose numbers start again: it reloads.
		lost, seq = true, 0
	case len(f.events) > 0 && seq < f.events[0].Seq-1:
		lost = true
		seq = f.events[0].Seq - 1
	}
	for _, e := range f.events {
		if e.Seq > seq {
			events = append(events, e)
		}
	}
	return events, f.changed, f.closed, lost
}
