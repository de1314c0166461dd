package sim

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"time"

	"knobs/llm"
)

// handler serves the simulator over the Cerebras API.
type handler struct {
	opts Options
	mux  *http.ServeMux
}

// NewHandler is the simulator as an http.Handler speaking the Cerebras
// wire format: GET /v1/models, GET /v1/models/{id}, POST
// /v1/chat/completions and POST /v1/completions.
func NewHandler(opts Options) http.Handler {
	h := &handler{opts: opts, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /v1/models", h.listModels)
	h.mux.HandleFunc("GET /v1/models/{id}", h.showModel)
	h.mux.HandleFunc("POST /v1/chat/completions", h.complete(llm.EndpointChat))
	h.mux.HandleFunc("POST /v1/completions", h.complete(llm.EndpointCompletion))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{http.StatusNotFound, flatError{
			Message: "Not found: " + r.Method + " " + r.URL.Path, Type: "not_found_error", Param: "", Code: "not_found"}})
	})
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.APIKey != "" {
		want := []byte("Bearer " + h.opts.APIKey)
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeError(w, &apiError{http.StatusUnauthorized, flatError{
				Message: "Wrong API Key", Type: "invalid_request_error", Param: "api_key", Code: "wrong_api_key"}})
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

func (h *handler) now() time.Time {
	if h.opts.Now != nil {
		return h.opts.Now()
	}
	return time.Now()
}

func (h *handler) listModels(w http.ResponseWriter, r *http.Request) {
	openrouter := r.URL.Query().Get("format") == "openrouter"
	list := modelList{Object: "list", Data: []modelInfo{}}
	for _, p := range profiles {
		list.Data = append(list.Data, describe(p, openrouter))
	}
	writeJSON(w, http.StatusOK, list)
}

func (h *handler) showModel(w http.ResponseWriter, r *http.Request) {
	p, ok := findProfile(r.PathValue("id"))
	if !ok {
		writeError(w, &apiError{http.StatusNotFound, flatError{
			Message: "Model " + r.PathValue("id") + " does not exist or you do not have access to it.",
			Type:    "not_found_error", Param: "model", Code: "model_not_found"}})
		return
	}
	writeJSON(w, http.StatusOK, describe(p, r.URL.Query().Get("format") == "openrouter"))
}

func describe(p profile, openrouter bool) modelInfo {
	m := modelInfo{ID: p.id, Object: "model", Created: p.created, OwnedBy: "knobs"}
	if openrouter {
		m.ContextLength, m.MaxOutputLength = p.contextLen, p.maxOutput
		m.Pricing = &pricing{Prompt: "0", Completion: "0"}
		m.SupportedParameters = supportedParameters(p)
		m.Description = "Knobs simulator, not a real model: " + p.description
	}
	return m
}

// maxBody bounds a request body; real providers refuse far smaller ones.
const maxBody = 16 << 20

func (h *handler) complete(endpoint llm.Endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, &apiError{http.StatusRequestEntityTooLarge, flatError{
				Message: "request body too large or unreadable", Type: "invalid_request_error", Param: "", Code: "request_too_large"}})
			return
		}
		req, apiErr := parseRequest(endpoint, body)
		if apiErr == nil {
			var j *job
			if j, apiErr = newJob(req); apiErr == nil {
				h.answer(w, r, j, body)
				return
			}
		}
		writeError(w, apiErr)
	}
}

// answer runs a valid job: a stream or one JSON response.
func (h *handler) answer(w http.ResponseWriter, r *http.Request, j *job, body []byte) {
	now := h.now()
	run := &run{job: j, choices: j.choices(), created: now}
	hsh := fnv.New128a()
	hsh.Write(body)
	fmt.Fprintf(hsh, "|%d|%d", j.seed, now.UnixNano())
	sum := hsh.Sum(nil)
	prefix, object := "chatcmpl-", "chat.completion"
	if j.endpoint == llm.EndpointCompletion {
		prefix, object = "cmpl-", "text_completion"
	}
	run.id = fmt.Sprintf("%s%x-%x-%x-%x-%x", prefix, sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	run.object = object
	fp := fnv.New32a()
	fp.Write([]byte(j.prof.id))
	run.fingerprint = fmt.Sprintf("fp_%08x", fp.Sum32())

	run.tps = j.prof.tps
	if h.opts.TokensPerSecond > 0 {
		run.tps = h.opts.TokensPerSecond
	}
	run.pace = newPacer(r.Context(), h.opts.TokensPerSecond < 0, run.tps, j.prof.queue+seconds(float64(j.promptTokens)/j.prof.promptTPS))
	defer run.pace.stop()

	rateLimitHeaders(w.Header(), now, j.limit*len(run.choices))
	if j.stream {
		// A stream that stops early has already said so on the wire (the
		// error chunk) or has nobody left to tell (the client went away).
		_ = run.stream(w)
		return
	}
	if err := run.whole(w); err != nil && !errors.Is(err, errStopped) {
		writeError(w, &apiError{http.StatusInternalServerError, flatError{
			Message: err.Error(), Type: "server_error", Param: "", Code: "internal_server_error"}})
	}
}

// rateLimitHeaders sends Cerebras' rate-limit headers with a budget that
// never runs out: a request reserves its max tokens, as Cerebras does.
func rateLimitHeaders(hd http.Header, now time.Time, reserve int) {
	day := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now).Seconds()
	minute := now.Truncate(time.Minute).Add(time.Minute).Sub(now).Seconds()
	hd.Set("x-ratelimit-limit-requests-day", "1000000")
	hd.Set("x-ratelimit-remaining-requests-day", "999999")
	hd.Set("x-ratelimit-reset-requests-day", strconv.FormatFloat(day, 'f', 2, 64))
	hd.Set("x-ratelimit-limit-tokens-minute", "10000000")
	hd.Set("x-ratelimit-remaining-tokens-minute", strconv.Itoa(max(0, 10000000-reserve)))
	hd.Set("x-ratelimit-reset-tokens-minute", strconv.FormatFloat(minute, 'f', 2, 64))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"message":"sim: cannot encode response","type":"server_error","param":"","code":"internal_server_error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.status, e.body) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
