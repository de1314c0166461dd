// Package logs builds Knobs' logger: text or JSON lines (for log
// shippers), every line logged with a request's context carrying that
// request's id.
package logs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
)

// Formats are the values KNOBS_LOG_FORMAT takes.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// New returns a logger writing to w in format (FormatText or FormatJSON;
// anything else is text), that adds request_id to a line logged with a
// context from WithRequestID.
func New(w io.Writer, format string) *slog.Logger {
	var h slog.Handler
	if format == FormatJSON {
		h = slog.NewJSONHandler(w, nil)
	} else {
		h = slog.NewTextHandler(w, nil)
	}
	return slog.New(contextHandler{h})
}

// WithRequests returns log, made to add request_id as New's loggers do
// when it does not already.
func WithRequests(log *slog.Logger) *slog.Logger {
	if _, ok := log.Handler().(contextHandler); ok {
		return log
	}
	return slog.New(contextHandler{log.Handler()})
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying a request's id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// MaxRequestIDLen is the longest request id taken from a client.
const MaxRequestIDLen = 64

// NewRequestID returns a fresh id: 24 hexadecimal digits.
func NewRequestID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("logs: no randomness for a request id: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// ValidRequestID reports whether id, as a client or proxy sent it in
// X-Request-Id, may be used and logged: 1 to MaxRequestIDLen letters,
// digits, '-', '_', '.' and ':'. Anything else (spaces, quotes, control
// characters that could forge a log line) is replaced by a fresh id.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// contextHandler adds the request id of the context a line is logged
// with.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
