package web

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"

	"knobs/field"
	"knobs/handlers"
	"knobs/web/session"
)

// APIPrefix is where the versioned REST API lives.
const APIPrefix = "/api/v1"

// apiAuth puts the API's authentication on group, for the routes
// registered after it: a bearer token, or else the session cookie with
// its CSRF token, as the pages have. A bearer request is its token's user
// alone: its cookie is not read.
func apiAuth(group fiber.Router, h *handlers.Handler, sessions *session.Manager, log *slog.Logger) {
	unlessToken := func(next fiber.Handler) fiber.Handler {
		return func(c *fiber.Ctx) error {
			if handlers.ByToken(c) {
				return c.Next()
			}
			return next(c)
		}
	}
	group.Use(apiLog(log), h.TokenAuth,
		unlessToken(sessions.Middleware), unlessToken(h.LoadUser), unlessToken(csrf), h.RequireAPIUser)
}

// newAPI is the huma API over group: operations registered on it are
// routes of the group and entries of its OpenAPI document. Its docs page
// (which loads scripts from a CDN), schema routes and the links it adds to
// answers are off: the document is served by serveOpenAPI.
func newAPI(app *fiber.App, group fiber.Router) huma.API {
	apiErrorsOnce.Do(func() {
		huma.NewError = apiError
		huma.NewErrorWithContext = apiErrorWithContext
	})
	cfg := huma.DefaultConfig("Knobs API", "1")
	cfg.Info.Description = "Knobs from code: authenticate with a personal API token (Settings → API tokens) as `Authorization: Bearer knobs_…`. Errors are `{\"error\": message, \"fields\": {name: message}}`."
	cfg.Servers = []*huma.Server{{URL: APIPrefix}}
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.CreateHooks = nil
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"token":   {Type: "http", Scheme: "bearer", Description: "A personal API token, knobs_…"},
		"session": {Type: "apiKey", In: "cookie", Name: session.CookieName, Description: "A signed-in browser session; unsafe methods also need its X-CSRF-Token header."},
	}
	cfg.Security = []map[string][]string{{"token": {}}, {"session": {}}}
	api := humafiber.NewWithGroup(app, group, cfg)
	return api
}

// serveOpenAPI answers the API's OpenAPI 3.1 document, built from the
// operations as registered, so that the two cannot drift apart.
func serveOpenAPI(api huma.API) fiber.Handler {
	var once sync.Once
	var doc []byte
	var err error
	return func(c *fiber.Ctx) error {
		once.Do(func() { doc, err = json.Marshal(api.OpenAPI()) })
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(doc)
	}
}

// apiErrorsOnce installs the API's error shape in huma, whose error
// constructors are package variables.
var apiErrorsOnce sync.Once

// apiError makes huma's errors (bad input, a body too large) the
// project's one error shape, handlers.Problem: {"error", "fields"}, with
// fields named as in the body ("name") or by the parameter ("limit").
func apiError(status int, msg string, errs ...error) huma.StatusError {
	p := &handlers.Problem{Status: status, Message: msg}
	for _, err := range errs {
		if err == nil {
			continue
		}
		d, ok := err.(huma.ErrorDetailer)
		if !ok {
			continue
		}
		detail := d.ErrorDetail()
		if p.Fields == nil {
			p.Fields = field.Errors{}
		}
		name, msg := fieldName(detail.Location), detail.Message
		// huma reports a missing property at its parent: name the property.
		if prop, ok := strings.CutPrefix(msg, "expected required property "); ok {
			if prop, ok = strings.CutSuffix(prop, " to be present"); ok {
				name, msg = strings.TrimPrefix(name+"."+prop, "body."), "This field is required."
			}
		}
		p.Fields.Add(name, msg)
	}
	switch {
	case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest && !p.Fields.Empty():
		p.Message = "Nothing was changed: fix the fields named in \"fields\"."
	case status == http.StatusBadRequest:
		p.Message = "The request body is not valid JSON."
	case status == http.StatusRequestEntityTooLarge:
		p.Message = "The request is too large for this endpoint."
	case status == http.StatusUnsupportedMediaType:
		p.Message = "Send the body as application/json."
	case status >= 500:
		p.Message = "Something went wrong on the server. It has been logged; try again."
	}
	return p
}

// fieldName is the field an error's location names: "body.name" ->
// "name", "query.limit" -> "limit", "body" -> "body".
func fieldName(loc string) string {
	for _, in := range []string{"body.", "query.", "path.", "header."} {
		if rest, ok := strings.CutPrefix(loc, in); ok {
			return rest
		}
	}
	return loc
}

// apiCauseKey holds, in Fiber's locals, an error an API operation
// returned that its answer does not tell (apiLog logs it).
const apiCauseKey = "knobs.api.cause"

// apiErrorWithContext answers an operation's own error as the app's error
// handler answers a page's: a Problem as it is, not found as 404, a full
// disk as 507, anything else as a logged 500.
func apiErrorWithContext(hc huma.Context, status int, msg string, errs ...error) huma.StatusError {
	if status != http.StatusInternalServerError || len(errs) != 1 || errs[0] == nil {
		return apiError(status, msg, errs...)
	}
	st, message, problem, logAs := describe(errs[0])
	if logAs != "" && hc != nil {
		humafiber.Unwrap(hc).Locals(apiCauseKey, apiCause{logAs, errs[0]})
	}
	if problem != nil {
		return problem
	}
	return &handlers.Problem{Status: st, Message: message}
}

// apiCause is an error an API operation hid from its caller.
type apiCause struct {
	msg string
	err error
}

// apiLog logs what an API operation hid from its caller (huma answers
// errors itself, so they do not reach the app's error handler).
func apiLog(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := c.Next()
		if cause, ok := c.Locals(apiCauseKey).(apiCause); ok {
			log.ErrorContext(c.UserContext(), cause.msg, "method", c.Method(), "path", logPath(c), "err", cause.err)
		}
		return err
	}
}

// runCreatedResponse describes POST /api/v1/runs's answer, which is one
// of two shapes: the run's id and events, or with wait the run.
func runCreatedResponse(api huma.API) *huma.Response {
	reg := api.OpenAPI().Components.Schemas
	return &huma.Response{
		Description: "The run started ({id, events}), or with wait the run as it ended.",
		Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{OneOf: []*huma.Schema{
			reg.Schema(reflect.TypeFor[handlers.RunCreated](), true, "RunCreated"),
			reg.Schema(reflect.TypeFor[handlers.RunDetail](), true, "RunDetail"),
		}}}},
	}
}

// documentRunEvents adds GET /runs/{id}/events, a plain Fiber route
// (huma does not stream), to the document, with its error answer as the
// registered operations have it.
func documentRunEvents(api huma.API) {
	documentByID(api, "/runs/{id}", "The run's id.", &huma.Operation{
		OperationID: "stream-run-events", Method: http.MethodGet, Path: "/runs/{id}/events", Tags: []string{"Runs"},
		Summary:     "A run's events as server-sent events, live or replayed",
		Description: "The run's events (request, delta, metrics, error, done, rendered) as GET /runs/{id}/events gives them to the playground. Each event has an id; reconnect with Last-Event-ID (or ?after=N) to resume after it: the upstream call is never started again. A finished run is replayed from the database. 204 when the reader already had every event.",
		Parameters: []*huma.Param{
			{Name: "after", In: "query", Description: "Resume after this event id.", Schema: &huma.Schema{Type: huma.TypeInteger}},
			{Name: "Last-Event-ID", In: "header", Description: "Resume after this event id, as EventSource sends it.", Schema: &huma.Schema{Type: huma.TypeString}},
		},
		Responses: map[string]*huma.Response{
			"200": {Description: "The event stream; it ends after the run's done event.", Content: map[string]*huma.MediaType{"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString}}}},
			"204": {Description: "The reader already had every event."},
		},
	})
}

func ptr[T any](v T) *T { return &v }

// documentPresetFile describes GET /presets/{preset}'s answers, which
// huma sees as bytes: the preset file (written by preset.Export), or 304
// to a matching If-None-Match.
func documentPresetFile(api huma.API) {
	reg := api.OpenAPI().Components.Schemas
	op := api.OpenAPI().Paths["/presets/{preset}"].Get
	op.Responses["200"] = &huma.Response{Description: "The preset file, byte for byte what the page's Export gives for that version.",
		Headers: op.Responses["200"].Headers,
		Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[handlers.PresetFile](), true, "PresetFile")}}}
	op.Responses["304"] = &huma.Response{Description: "The copy named by If-None-Match is still the one."}
}

// documentExperimentEvents adds GET /experiments/{id}/events, a plain
// Fiber route, to the document.
func documentExperimentEvents(api huma.API) {
	documentByID(api, "/experiments/{id}", "The experiment's id.", &huma.Operation{
		OperationID: "stream-experiment-events", Method: http.MethodGet, Path: "/experiments/{id}/events", Tags: []string{"Experiments"},
		Summary:     "An experiment's events as server-sent events: one connection for the whole grid",
		Description: "A cell event as each cell ends ({seq, kind: \"cell\", cell: {id, variant, row, repeat, status, output, grades, latency_ms, tokens, cost_usd, error}, progress: {done, total, failed, elapsed_ms, cells_per_s, remaining_ms, spent_usd}}), then end ({status, error}). Each event has an id; reconnect with Last-Event-ID (or ?after=N) to resume after it. A reader too far behind gets reset first: reload the results. An experiment that has ended answers its end event at once.",
		Parameters: []*huma.Param{
			{Name: "after", In: "query", Description: "Resume after this event id.", Schema: &huma.Schema{Type: huma.TypeInteger}},
			{Name: "Last-Event-ID", In: "header", Description: "Resume after this event id, as EventSource sends it.", Schema: &huma.Schema{Type: huma.TypeString}},
		},
		Responses: map[string]*huma.Response{
			"200": {Description: "The event stream; it ends after the end event.", Content: map[string]*huma.MediaType{"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString}}}},
		},
	})
}

// documentExperimentExport adds GET /experiments/{id}/export, a plain
// Fiber route that streams its download, to the document.
func documentExperimentExport(api huma.API) {
	documentByID(api, "/experiments/{id}", "The experiment's id.", &huma.Operation{
		OperationID: "export-experiment", Method: http.MethodGet, Path: "/experiments/{id}/export", Tags: []string{"Experiments"},
		Summary:     "Download an experiment's results as CSV or JSON Lines",
		Description: "Every cell with its row's values, output, measurements, grades and ratings. CSV has a column per variable and three per grader (pass, score, reason); values a spreadsheet could run as formulas start with '. JSON Lines has a cell a line, as the results give it.",
		Parameters: []*huma.Param{
			{Name: "format", In: "query", Description: "csv (the default) or jsonl.", Schema: &huma.Schema{Type: huma.TypeString, Enum: []any{"csv", "jsonl"}}},
		},
		Responses: map[string]*huma.Response{
			"200": {Description: "The download.", Content: map[string]*huma.MediaType{
				"text/csv":             {Schema: &huma.Schema{Type: huma.TypeString}},
				"application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString}},
			}},
		},
	})
}

// documentArenaVotes adds GET /arenas/{id}/votes.csv, a plain Fiber
// route, to the document.
func documentArenaVotes(api huma.API) {
	documentByID(api, "/arenas/{id}", "The arena's id.", &huma.Operation{
		OperationID: "export-arena-votes", Method: http.MethodGet, Path: "/arenas/{id}/votes.csv", Tags: []string{"Arenas"},
		Summary: "Every vote of an arena as CSV: when, which voter (by number), the prompt, the two contestants as shown, the choice, the winner and the reason",
		Responses: map[string]*huma.Response{
			"200": {Description: "The votes.", Content: map[string]*huma.MediaType{"text/csv": {Schema: &huma.Schema{Type: huma.TypeString}}}},
		},
	})
}

// documentByID adds to the document a plain Fiber route that huma cannot
// serve (an event stream, a download) under a registered operation's
// path (like, a GET), taking its id path parameter (idDoc) and its error
// answer, as the registered operations have them.
func documentByID(api huma.API, like, idDoc string, op *huma.Operation) {
	doc := api.OpenAPI()
	id := &huma.Param{Name: "id", In: "path", Required: true, Description: idDoc, Schema: &huma.Schema{Type: huma.TypeInteger, Format: "int64", Minimum: ptr(1.0)}}
	op.Parameters = append([]*huma.Param{id}, op.Parameters...)
	op.Responses["default"] = doc.Paths[like].Get.Responses["default"]
	doc.AddOperation(op)
}
