package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"knobs/db"
	"knobs/metrics"
)

// writer stores what runs write (new rows, checkpoint chunks, endings,
// raw answers) through one goroutine that commits whatever is waiting in
// one transaction: fifty runs going at once share one commit per round
// instead of queueing fifty on the database's single writer, and a
// request that creates a run never waits behind another run's bulk data.
// Writes are committed in the order they were queued, so a run's row is
// always written before its chunks and its ending.
type writer struct {
	store   Store
	log     *slog.Logger
	metrics *metrics.Metrics // told the queue's length as it changes

	mu      sync.Mutex
	queue   []writeOp
	wake    chan struct{} // one pending signal
	stopped bool
	done    chan struct{} // closed when the loop has ended
}

// writeOp is one write, and where its outcome goes: to done, or to then,
// called on the writer's goroutine (it must not block); with neither, a
// failure is logged.
type writeOp struct {
	w    db.RunWrite
	done chan error
	then func(error)
}

// errWriterStopped refuses a write queued after the runner shut down.
var errWriterStopped = errors.New("runner: the store writer has stopped")

// Bounds of one transaction: past them the rest waits for the next round,
// so that no single commit holds the writer for long.
const (
	batchMaxWrites = 256
	batchMaxBytes  = 8 << 20
	writeTimeout   = 10 * time.Second
)

func newWriter(store Store, log *slog.Logger, m *metrics.Metrics) *writer {
	w := &writer{store: store, log: log, metrics: m, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w
}

// enqueue queues w; its outcome goes to done, if not nil. After stop,
// the write is refused at once.
func (wr *writer) enqueue(w db.RunWrite, done chan error) {
	wr.push(writeOp{w: w, done: done})
}

// push queues op, or reports at once that the writer has stopped.
func (wr *writer) push(op writeOp) {
	wr.mu.Lock()
	if wr.stopped {
		wr.mu.Unlock()
		wr.report(op, errWriterStopped)
		return
	}
	wr.queue = append(wr.queue, op)
	wr.metrics.WriterQueue(len(wr.queue))
	wr.mu.Unlock()
	select {
	case wr.wake <- struct{}{}:
	default:
	}
}

// write queues w and waits until it is committed or refused.
func (wr *writer) write(w db.RunWrite) error {
	done := make(chan error, 1)
	wr.enqueue(w, done)
	return <-done
}

// stop ends the loop once everything queued is written.
func (wr *writer) stop() {
	wr.mu.Lock()
	wr.stopped = true
	wr.mu.Unlock()
	select {
	case wr.wake <- struct{}{}:
	default:
	}
	<-wr.done
}

func (wr *writer) loop() {
	defer close(wr.done)
	for range wr.wake {
		for {
			batch, last := wr.take()
			if len(batch) > 0 {
				wr.commit(batch)
			}
			if last {
				return
			}
			if len(batch) == 0 {
				break
			}
		}
	}
}

// take removes a round's worth of writes from the queue; last says the
// queue is empty and stopped.
func (wr *writer) take() (batch []writeOp, last bool) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	n, size := 0, 0
	for n < len(wr.queue) && n < batchMaxWrites && (n == 0 || size+wr.queue[n].w.Size() <= batchMaxBytes) {
		size += wr.queue[n].w.Size()
		n++
	}
	batch = wr.queue[:n:n]
	wr.queue = wr.queue[n:]
	if len(wr.queue) == 0 {
		wr.queue = nil
	}
	wr.metrics.WriterQueue(len(wr.queue))
	return batch, wr.stopped && len(wr.queue) == 0
}

// commit writes a batch in one transaction. When it fails, each write is
// tried alone, so that one bad write (a full disk refuses them all; a
// broken one only itself) fails no other.
func (wr *writer) commit(batch []writeOp) {
	ws := make([]db.RunWrite, len(batch))
	for i, op := range batch {
		ws[i] = op.w
	}
	err := wr.writeRuns(ws)
	if err == nil || len(batch) == 1 {
		for _, op := range batch {
			wr.report(op, err)
		}
		return
	}
	for _, op := range batch {
		wr.report(op, wr.writeRuns([]db.RunWrite{op.w}))
	}
}

// writeRuns commits ws with a deadline of its own: a run's context is
// cancelled by the time it ends, so writes never use it.
func (wr *writer) writeRuns(ws []db.RunWrite) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return wr.store.WriteRuns(ctx, ws)
}

func (wr *writer) report(op writeOp, err error) {
	switch {
	case op.then != nil:
		op.then(err)
		return
	case op.done != nil:
		op.done <- err
		return
	}
	if err != nil {
		wr.log.Error("storing part of a run", "run", op.w.RunID, "err", err)
	}
}
