package handlers

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"knobs/db"
	"knobs/experiment"
	"knobs/web/sse"
)

// ExperimentEvents streams an experiment's events as SSE, one
// connection for the whole grid: a "cell" event as each cell ends (with
// the progress after it), and "end" when the experiment ends. Each event
// has an id; a reconnect with Last-Event-ID resumes after it, or gets
// "reset" when those events are no longer kept (the page then reloads
// the results). An experiment that does not run here gets its "end" at
// once.
func (h *Handler) ExperimentEvents(c *fiber.Ctx) error {
	u, _ := CurrentUser(c)
	id, err := pathID(c, "experiment")
	if err != nil {
		return err
	}
	e, err := h.store.Experiment(ctx(c), u.ID, id)
	if errors.Is(err, db.ErrNotFound) {
		return &Problem{Status: fiber.StatusNotFound, Message: "There is no such experiment."}
	} else if err != nil {
		return err
	}
	after, _ := strconv.Atoi(c.Get("Last-Event-ID"))
	if q := c.Query("after"); q != "" {
		after, _ = strconv.Atoi(q)
	}
	after = max(after, 0)
	if f, ok := h.experiments.Subscribe(id); ok {
		return h.serveEvents(c, &feedSource{f: f}, after, func() {})
	}
	end := experiment.Event{Seq: int64(after) + 1, Kind: "end", Status: e.Status, Error: e.Error,
		Progress: &experiment.Progress{Done: e.Finished, Total: e.Total, Failed: e.Failed}}
	return h.serveEvents(c, sse.Recorded{eventFrame(end)}, 0, func() {})
}

// feedSource shows an experiment's Feed as frames. sse.Serve counts the
// frames it sent; a reader that resumes after events no longer kept gets
// a "reset" frame first and then the events kept, and offset maps the
// count back to the events' Seq from then on.
type feedSource struct {
	f      *experiment.Feed
	offset int64
	begun  bool
}

func (s *feedSource) Frames(after int) ([][]byte, bool, <-chan struct{}) {
	events, more, ended, lost := s.f.Since(int64(after) + s.offset)
	frames := make([][]byte, 0, len(events)+1)
	if !s.begun {
		s.begun = true
		if lost && len(events) > 0 {
			// after + 1 frames stand for the events up to the first kept.
			s.offset = events[0].Seq - 2 - int64(after)
			frames = append(frames, eventFrame(experiment.Event{Seq: events[0].Seq - 1, Kind: "reset"}))
		}
	}
	for _, e := range events {
		frames = append(frames, eventFrame(e))
	}
	return frames, ended, more
}

// eventFrame encodes an experiment event as one SSE frame.
func eventFrame(e experiment.Event) []byte {
	data, _ := json.Marshal(e) // plain fields: it always encodes
	b := []byte("id: " + strconv.FormatInt(e.Seq, 10) + "\nevent: " + e.Kind + "\ndata: ")
	b = append(b, data...)
	return append(b, "\n\n"...)
}
