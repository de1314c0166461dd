package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"knobs/handlers"
	"knobs/web/session"
)

// allowUploads lets the dataset upload routes take bodies up to
// handlers.DatasetUploadLimit while every other request keeps BodyLimit.
// fasthttp reads a body before any handler runs, so the limit is chosen
// from the request's header alone (HeaderReceived): a larger body is
// refused before it is read, with a 413 that says what a dataset file may
// be. A multipart upload's file goes to a temporary file past 16 MB
// (fasthttp's pre-parse), so only a raw upload is held whole in memory.
func allowUploads(app *fiber.App) {
	srv := app.Server()
	srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if isUpload(h) {
			return fasthttp.RequestConfig{MaxRequestBodySize: handlers.DatasetUploadLimit}
		}
		return fasthttp.RequestConfig{}
	}
	answer := srv.ErrorHandler
	srv.ErrorHandler = func(fc *fasthttp.RequestCtx, err error) {
		if !errors.Is(err, fasthttp.ErrBodyTooLarge) || !isUpload(&fc.Request.Header) {
			answer(fc, err)
			return
		}
		c := app.AcquireCtx(fc)
		defer app.ReleaseCtx(c)
		// The rest of the body is not read: the connection cannot be
		// used again.
		c.Set(fiber.HeaderConnection, "close")
		if herr := app.Config().ErrorHandler(c, &handlers.Problem{Status: fiber.StatusRequestEntityTooLarge, Message: handlers.DatasetTooLarge}); herr != nil {
			_ = c.SendStatus(fiber.StatusRequestEntityTooLarge)
		}
	}
}

// isUpload reports whether a request's header is that of a dataset
// upload: a POST to one of handlers.DatasetUploadPaths that claims to be
// signed in (a bearer token or the session cookie: checked after the
// body is read, but a request with neither keeps the small limit).
func isUpload(h *fasthttp.RequestHeader) bool {
	if !h.IsPost() || len(h.Peek(fiber.HeaderAuthorization)) == 0 && len(h.Cookie(session.CookieName)) == 0 {
		return false
	}
	path, _, _ := strings.Cut(string(h.RequestURI()), "?")
	return slices.Contains(handlers.DatasetUploadPaths, path)
}

// documentDatasetImport describes POST /datasets/import, a plain route
// (huma reads a body whole before an operation sees it).
func documentDatasetImport(api huma.API) {
	doc := api.OpenAPI()
	def := doc.Paths["/datasets"].Post.Responses["default"]
	created := doc.Paths["/datasets"].Post.Responses["201"]
	str := &huma.Schema{Type: huma.TypeString}
	doc.AddOperation(&huma.Operation{
		OperationID: "import-dataset", Method: http.MethodPost, Path: "/datasets/import", Tags: []string{"Datasets"},
		Summary:     "Save an uploaded CSV, tab-separated or JSON Lines file (up to 50 MB) as a new dataset",
		Description: "Send the file as multipart/form-data (field file, with name, and optionally description and visibility), or as the whole body with Content-Type text/csv, text/tab-separated-values or application/x-ndjson and ?name=. The file is read by the rules of the dataset help; a file with any problem is refused whole (422), fields.file naming the line and column of the first problem, and nothing is saved. A body over 50 MB is refused with 413 before it is read.",
		Parameters: []*huma.Param{
			{Name: "name", In: "query", Description: "The dataset's name, for a raw body.", Schema: str},
			{Name: "description", In: "query", Description: "Its description, for a raw body.", Schema: str},
			{Name: "visibility", In: "query", Description: "private (default) or team, for a raw body.", Schema: &huma.Schema{Type: huma.TypeString, Enum: []any{"private", "team"}}},
		},
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
			"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{"file", "name"}, Properties: map[string]*huma.Schema{
				"file": {Type: huma.TypeString, ContentEncoding: "binary"}, "name": str, "description": str,
				"visibility": {Type: huma.TypeString, Enum: []any{"private", "team"}}}}},
			"text/csv":                  {Schema: str},
			"text/tab-separated-values": {Schema: str},
			"application/x-ndjson":      {Schema: str},
		}},
		Responses: map[string]*huma.Response{"201": created, "default": def},
	})
}
