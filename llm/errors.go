package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// errorFields is what could be read out of an error body of any of the
// shapes providers use.
type errorFields struct {
	message, typ, param, code, field string
	status                           int // status_code inside the body, if any
}

// errorBody matches every error body shape at once: Cerebras' flat
// {"message","type","param","code"}, OpenAI's {"error":{...}}, xAI's
// {"code":"...","error":"..."}, FastAPI's {"detail":[...]} or
// {"detail":"..."}, and the error chunk {"error":{...},"status_code":500}.
// Fields are raw so that one odd type does not hide the rest.
type errorBody struct {
	Message    json.RawMessage `json:"message"`
	Type       json.RawMessage `json:"type"`
	Param      json.RawMessage `json:"param"`
	Code       json.RawMessage `json:"code"`
	Error      json.RawMessage `json:"error"`
	Detail     json.RawMessage `json:"detail"`
	StatusCode json.RawMessage `json:"status_code"`
}

// rawText returns a JSON string's value, a number's text, or "" for null,
// objects and arrays.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw)
	}
	return ""
}

// parseErrorBody reads an error body; ok is false when it is not a JSON
// object with anything recognisable in it.
func parseErrorBody(body []byte) (errorFields, bool) {
	var b errorBody
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &b) != nil {
		return errorFields{}, false
	}
	f := errorFields{
		message: rawText(b.Message),
		typ:     rawText(b.Type),
		param:   rawText(b.Param),
		code:    rawText(b.Code),
	}
	if n, err := strconv.Atoi(rawText(b.StatusCode)); err == nil {
		f.status = n
	}
	if e := bytes.TrimSpace(b.Error); len(e) > 0 {
		switch e[0] {
		case '{':
			var inner errorBody
			if json.Unmarshal(e, &inner) == nil {
				f.message = rawText(inner.Message)
				f.typ = firstNonEmpty(rawText(inner.Type), f.typ)
				f.param = firstNonEmpty(rawText(inner.Param), f.param)
				f.code = firstNonEmpty(rawText(inner.Code), f.code)
				if len(inner.Detail) > 0 && f.message == "" {
					f.message, f.field = detailMessage(inner.Detail)
				}
			}
		case '"':
			// xAI: "code" is then a sentence, kept as Code. A body with a
			// message beside the string keeps both.
			f.message = joinMessages(rawText(e), f.message)
		}
	}
	if f.message == "" && len(b.Detail) > 0 {
		f.message, f.field = detailMessage(b.Detail)
	}
	if f.field == "" {
		f.field = fieldOf(f.message, f.param)
	}
	if f.message == "" && f.code == "" && f.typ == "" {
		return f, false
	}
	return f, true
}

// detailMessage reads FastAPI's detail: a string, or a list of
// {"loc":["body","temperature"],"msg":"..."} whose messages are joined.
func detailMessage(raw json.RawMessage) (msg, field string) {
	if s := rawText(raw); s != "" {
		return s, ""
	}
	var ds []ValidationDetail
	if json.Unmarshal(raw, &ds) != nil {
		return "", ""
	}
	var msgs []string
	for _, d := range ds {
		if d.Msg != "" {
			msgs = append(msgs, d.Msg)
		}
		if field == "" {
			field = locField(d.Loc)
		}
	}
	return strings.Join(msgs, "; "), field
}

// locField turns ["body","messages",0,"content"] into "messages.0.content".
func locField(loc []any) string {
	var parts []string
	for i, p := range loc {
		s := fmt.Sprint(p)
		if f, ok := p.(float64); ok {
			s = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if i == 0 && s == "body" {
			continue
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ".")
}

// fieldOf finds the request field an error is about: Cerebras' message
// "body.store: property 'body.store' is unsupported" names it, otherwise a
// param that is a field name rather than a category.
func fieldOf(message, param string) string {
	if rest, ok := strings.CutPrefix(message, "body."); ok {
		if i := strings.IndexAny(rest, ": "); i > 0 {
			return rest[:i]
		}
	}
	switch param {
	case "", "validation_error", "quota", "api_key", "authorization":
		return ""
	}
	if strings.ContainsAny(param, " \t") {
		return ""
	}
	return param
}

// joinMessages writes two texts of one error as "a: b", or one of them
// when the other is empty or the same.
func joinMessages(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return a + ": " + b
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// classifyResponse turns a failed HTTP answer into an Error, keeping the
// provider's message verbatim. An HTML page is reduced to its title: it
// says what happened and the rest is a CDN's markup.
func classifyResponse(status int, h http.Header, body []byte, now time.Time) *Error {
	e := &Error{Status: status}
	if isHTML(h, body) {
		e.Kind = ErrHTMLPage
		e.Message = htmlTitle(body)
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
		e.RetryAfter = retryAfter(h, now)
		return e
	}
	f, ok := parseErrorBody(body)
	if ok {
		e.Message, e.Code, e.Type, e.Field = f.message, f.code, f.typ, f.field
	} else {
		e.Message = plainText(body)
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	e.Kind = errorKindFor(status, f, e.Message)
	if e.Kind == ErrRateLimit || e.Kind == ErrServer || e.Kind == ErrNoCredits {
		e.RetryAfter = retryAfter(h, now)
	}
	if e.Kind != ErrValidation && e.Kind != ErrUnknownModel {
		e.Field = ""
	}
	return e
}

func errorKindFor(status int, f errorFields, message string) ErrorKind {
	text := strings.ToLower(message + " " + f.code + " " + f.typ)
	switch {
	case status == http.StatusUnauthorized || f.code == "wrong_api_key" || f.code == "invalid_api_key" || badKeyText(text):
		return ErrBadKey
	case status == http.StatusPaymentRequired:
		return ErrNoCredits
	case (status == http.StatusTooManyRequests || status == http.StatusForbidden) && noCreditsText(text):
		return ErrNoCredits
	case status == http.StatusForbidden:
		return ErrPermission
	case status == http.StatusTooManyRequests || rateLimitCode(f):
		return ErrRateLimit
	case f.code == "model_not_found" || (status == http.StatusNotFound && modelMissingText(text)):
		return ErrUnknownModel
	case status == http.StatusNotFound:
		// A body that merely mentions a model ("this server serves chat
		// models only") is about the route, not the model asked for.
		return ErrNoEndpoint
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return ErrTimeout
	case status >= 500:
		return ErrServer
	case status == http.StatusBadRequest, status == http.StatusUnprocessableEntity,
		status == http.StatusRequestEntityTooLarge, status == http.StatusUnsupportedMediaType:
		return ErrValidation
	}
	return ErrBadResponse
}

// rateLimitCode recognises a rate limit by its code or type, for error
// chunks that come without a status.
func rateLimitCode(f errorFields) bool {
	switch f.code {
	case "rate_limit_exceeded", "request_quota_exceeded", "token_quota_exceeded":
		return true
	}
	return f.typ == "too_many_requests_error" || f.typ == "rate_limit_error"
}

// modelMissingText says the text reports a model that does not exist.
func modelMissingText(s string) bool {
	if !strings.Contains(s, "model") {
		return false
	}
	for _, w := range []string{"not found", "does not exist", "no such model", "unknown model", "not exist"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func badKeyText(s string) bool {
	if !strings.Contains(s, "api key") && !strings.Contains(s, "api_key") && !strings.Contains(s, "apikey") {
		return false
	}
	for _, w := range []string{"incorrect", "invalid", "wrong", "missing", "no api key", "not provided", "revoked", "expired"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func noCreditsText(s string) bool {
	for _, w := range []string{"credit", "spending limit", "insufficient_quota", "billing", "exceeded your current quota", "payment"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func isHTML(h http.Header, body []byte) bool {
	if strings.Contains(strings.ToLower(h.Get("Content-Type")), "text/html") {
		return true
	}
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '<' {
		return false
	}
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.HasPrefix(head, "<!doctype html") || strings.Contains(head, "<html") ||
		strings.Contains(head, "<head") || strings.Contains(head, "<title") || strings.Contains(head, "<body")
}

// htmlTitle returns the text of the page's <title>, unescaped and with its
// whitespace collapsed, or "".
func htmlTitle(body []byte) string {
	low := bytes.ToLower(body)
	i := bytes.Index(low, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(low[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(low[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	t := html.UnescapeString(string(body[start : start+end]))
	t = strings.Join(strings.Fields(t), " ")
	return truncate(t, maxExcerpt)
}

// maxExcerpt bounds what is shown of an answer that is not the
// provider's own (a proxy's or CDN's page, a plain-text error), in the
// message and in the raw view: enough to tell what it was, not a page of
// someone else's markup.
const maxExcerpt = 300

// plainText is a non-JSON body as a message: its text, without markup,
// control characters or runs of white space, cut at maxExcerpt.
func plainText(body []byte) string {
	return excerpt(body, maxExcerpt)
}

// excerpt returns the readable text at the start of body, at most n
// bytes of it (cut on a rune boundary, with an ellipsis): tags, scripts
// and styles are dropped when body is markup, control characters and
// runs of white space always. Only the first 64 KiB are looked at.
func excerpt(body []byte, n int) string {
	body = body[:min(len(body), 64<<10)]
	trimmed := bytes.TrimSpace(body)
	markup := len(trimmed) > 0 && trimmed[0] == '<'
	var b strings.Builder
	space := false
	for i := 0; i < len(body) && b.Len() <= n+8; {
		if markup && body[i] == '<' {
			end := bytes.IndexByte(body[i:], '>')
			if end < 0 {
				break
			}
			tag := bytes.ToLower(body[i+1 : i+end])
			i += end + 1
			for _, skip := range []string{"script", "style"} {
				if bytes.HasPrefix(tag, []byte(skip)) {
					if j := bytes.Index(bytes.ToLower(body[i:]), []byte("</"+skip)); j >= 0 {
						i += j
					} else {
						i = len(body)
					}
				}
			}
			space = true
			continue
		}
		r, size := utf8.DecodeRune(body[i:])
		i += size
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	text := b.String()
	if markup {
		text = html.UnescapeString(text)
	}
	return truncate(text, n)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// streamError builds the Error of an error chunk inside a 200 stream, with
// or without an "event: error" line before it. Its status_code, when
// present, is the real status of the failure, and the chunk is classified
// as that HTTP error would be whenever that tells the user what to do (a
// rate limit with its wait from the headers h, a bad key, a validation
// error); a server error or anything unrecognised stays ErrStream.
func streamError(data []byte, h http.Header, now time.Time) *Error {
	e := &Error{Kind: ErrStream}
	f, ok := parseErrorBody(data)
	if !ok {
		e.Message = plainText(data)
		if e.Message == "" {
			e.Message = "the provider reported an error in the stream"
		}
		return e
	}
	e.Message, e.Code, e.Type, e.Field, e.Status = f.message, f.code, f.typ, f.field, f.status
	if e.Message == "" {
		e.Message = firstNonEmpty(f.code, f.typ)
	}
	switch k := errorKindFor(f.status, f, e.Message); k {
	case ErrBadKey, ErrRateLimit, ErrNoCredits, ErrPermission, ErrUnknownModel, ErrValidation:
		e.Kind = k
		if k == ErrRateLimit || k == ErrNoCredits {
			e.RetryAfter = retryAfter(h, now)
		}
	}
	if e.Kind != ErrValidation && e.Kind != ErrUnknownModel {
		e.Field = ""
	}
	return e
}

// transportError classifies a failure to get or read an answer. closed
// says the caller ended the stream; timedOut that the first-byte timer
// fired.
func transportError(err error, parent context.Context, closed, timedOut bool, timeout time.Duration, midStream bool) *Error {
	var refused *UpstreamAddressError
	if errors.As(err, &refused) {
		return &Error{Kind: ErrNetwork, Message: refused.Error()}
	}
	switch {
	case timedOut:
		return &Error{Kind: ErrTimeout, Message: fmt.Sprintf("no answer from the provider within %s", timeout)}
	case closed:
		return &Error{Kind: ErrCanceled, Message: "the request was stopped"}
	case errors.Is(parent.Err(), context.Canceled):
		return &Error{Kind: ErrCanceled, Message: "the request was canceled"}
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return &Error{Kind: ErrTimeout, Message: "the request ran out of time"}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: ErrTimeout, Message: err.Error()}
	}
	msg := err.Error()
	if midStream {
		msg = "the connection broke mid-stream: " + msg
	}
	return &Error{Kind: ErrNetwork, Message: msg}
}
