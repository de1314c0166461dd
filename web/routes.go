package web

import (
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"knobs/handlers"
	"knobs/static"
	"knobs/web/session"
)

// routes lists every route of Knobs, grouped by area.
func routes(app *fiber.App, h *handlers.Handler, sessions *session.Manager, log *slog.Logger) {
	// Open to anyone, no session.
	app.Get("/healthz", h.Healthz)
	app.Get("/readyz", h.Readyz)
	// Only with KNOBS_METRICS_TOKEN, and only with it as a bearer token;
	// otherwise a 404 as for any unknown path.
	app.Get("/metrics", h.ShowMetrics)
	app.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static.FS), MaxAge: 300}))
	app.Get("/assets/code.css", h.CodeCSS)

	// The REST API, /api/v1: its document is open to anyone; every
	// operation needs a bearer token or a session (and its CSRF token).
	group := app.Group(APIPrefix)
	api := newAPI(app, group)
	group.Get("/openapi.json", serveOpenAPI(api))
	apiAuth(group, h, sessions, log)
	huma.Register(api, huma.Operation{OperationID: "list-providers", Method: http.MethodGet, Path: "/providers", Summary: "List the providers you can use and their models", Tags: []string{"Providers"}}, h.ListAPIProviders)
	huma.Register(api, huma.Operation{OperationID: "create-token", Method: http.MethodPost, Path: "/tokens", DefaultStatus: http.StatusCreated, Summary: "Create a personal API token (its secret is shown only in this answer)", Tags: []string{"Tokens"}}, h.CreateAPIToken)
	huma.Register(api, huma.Operation{OperationID: "list-tokens", Method: http.MethodGet, Path: "/tokens", Summary: "List your API tokens that are not revoked (never their secrets)", Tags: []string{"Tokens"}}, h.ListAPITokens)
	huma.Register(api, huma.Operation{OperationID: "revoke-token", Method: http.MethodDelete, Path: "/tokens/{id}", DefaultStatus: http.StatusNoContent, Summary: "Revoke one of your API tokens", Tags: []string{"Tokens"}}, h.RevokeAPIToken)
	huma.Register(api, huma.Operation{OperationID: "create-run", Method: http.MethodPost, Path: "/runs", DefaultStatus: http.StatusCreated, Summary: "Start a run: {id, events} at once, or with wait the run once it has ended", Tags: []string{"Runs"},
		Responses: map[string]*huma.Response{"201": runCreatedResponse(api)}}, h.CreateAPIRun)
	huma.Register(api, huma.Operation{OperationID: "list-runs", Method: http.MethodGet, Path: "/runs", Summary: "Search your runs with the filters of History, newest first", Tags: []string{"Runs"}}, h.ListAPIRuns)
	huma.Register(api, huma.Operation{OperationID: "get-run", Method: http.MethodGet, Path: "/runs/{id}", Summary: "One of your runs: request, answers, usage and metrics", Tags: []string{"Runs"}}, h.ShowAPIRun)
	huma.Register(api, huma.Operation{OperationID: "cancel-run", Method: http.MethodPost, Path: "/runs/{id}/cancel", DefaultStatus: http.StatusAccepted, Summary: "Stop a live run, keeping its partial answer; answers the run as stored", Tags: []string{"Runs"}}, h.CancelAPIRun)
	huma.Register(api, huma.Operation{OperationID: "delete-run", Method: http.MethodDelete, Path: "/runs/{id}", DefaultStatus: http.StatusNoContent, Summary: "Delete one of your runs, stopping it first when it is live", Tags: []string{"Runs"}}, h.RemoveAPIRun)
	huma.Register(api, huma.Operation{OperationID: "get-budgets", Method: http.MethodGet, Path: "/budgets", Summary: "The monthly budgets with what was spent under each: all of them for an admin, the ones on you for a member", Tags: []string{"Budgets"}}, h.ShowAPIBudgets)
	huma.Register(api, huma.Operation{OperationID: "update-budgets", Method: http.MethodPut, Path: "/budgets", Summary: "Set every monthly budget at once (admins): team, per user, per provider, the warning share, the token cap and who is exempt", Tags: []string{"Budgets"}}, h.UpdateAPIBudgets)
	huma.Register(api, huma.Operation{OperationID: "list-presets", Method: http.MethodGet, Path: "/presets", Summary: "List your presets and the team's, with their labels, newest first", Tags: []string{"Presets"}}, h.ListAPIPresets)
	huma.Register(api, huma.Operation{OperationID: "get-preset", Method: http.MethodGet, Path: "/presets/{preset}", Summary: "A version of a preset in the export format, by label or version (default: the production label, else the latest), with an ETag", Tags: []string{"Presets"}}, h.ShowAPIPreset)
	documentPresetFile(api)
	huma.Register(api, huma.Operation{OperationID: "create-preset", Method: http.MethodPost, Path: "/presets", DefaultStatus: http.StatusCreated, Summary: "Save a preset file (the export format) as a new preset", Tags: []string{"Presets"}}, h.CreateAPIPreset)
	huma.Register(api, huma.Operation{OperationID: "update-preset", Method: http.MethodPut, Path: "/presets/{id}", Summary: "Save a preset file as the preset's next version, over base_version (409 when another was saved since)", Tags: []string{"Presets"}}, h.UpdateAPIPreset)
	huma.Register(api, huma.Operation{OperationID: "render-preset", Method: http.MethodPost, Path: "/presets/{preset}/render", Summary: "The exact request body a run of the preset would send upstream, for apps that call the provider themselves", Tags: []string{"Presets"}}, h.RenderAPIPreset)
	huma.Register(api, huma.Operation{OperationID: "list-preset-labels", Method: http.MethodGet, Path: "/presets/{id}/labels", Summary: "A preset's labels and the history of their moves", Tags: []string{"Presets"}}, h.ListAPILabels)
	huma.Register(api, huma.Operation{OperationID: "move-preset-label", Method: http.MethodPut, Path: "/presets/{id}/labels/{label}", Summary: "Point a label of a preset at one of its versions (recorded)", Tags: []string{"Presets"}}, h.MoveAPILabel)
	huma.Register(api, huma.Operation{OperationID: "remove-preset-label", Method: http.MethodDelete, Path: "/presets/{id}/labels/{label}", DefaultStatus: http.StatusNoContent, Summary: "Take a label off a preset (recorded)", Tags: []string{"Presets"}}, h.RemoveAPILabel)
	huma.Register(api, huma.Operation{OperationID: "create-experiment", Method: http.MethodPost, Path: "/experiments", DefaultStatus: http.StatusCreated, Summary: "Start an experiment: variants × the dataset's rows × repeats, each cell a run, graded as it ends", Tags: []string{"Experiments"}}, h.CreateAPIExperiment)
	huma.Register(api, huma.Operation{OperationID: "preview-experiment", Method: http.MethodPost, Path: "/experiments/preview", Summary: "Check and estimate an experiment before starting it: its calls, tokens and cost, and what POST /experiments would refuse", Tags: []string{"Experiments"}}, h.PreviewAPIExperiment)
	huma.Register(api, huma.Operation{OperationID: "list-experiments", Method: http.MethodGet, Path: "/experiments", Summary: "List your experiments and the team's, newest first", Tags: []string{"Experiments"}}, h.ListAPIExperiments)
	huma.Register(api, huma.Operation{OperationID: "get-experiment", Method: http.MethodGet, Path: "/experiments/{id}", Summary: "An experiment: status, progress and per-variant aggregates", Tags: []string{"Experiments"}}, h.ShowAPIExperiment)
	huma.Register(api, huma.Operation{OperationID: "get-experiment-results", Method: http.MethodGet, Path: "/experiments/{id}/results", Summary: "Every cell of an experiment with its output, grades and ratings, by row", Tags: []string{"Experiments"}}, h.ExperimentAPIResults)
	huma.Register(api, huma.Operation{OperationID: "cancel-experiment", Method: http.MethodPost, Path: "/experiments/{id}/cancel", Summary: "Stop a running experiment, keeping what its cells produced", Tags: []string{"Experiments"}}, h.CancelAPIExperiment)
	huma.Register(api, huma.Operation{OperationID: "compare-experiments", Method: http.MethodGet, Path: "/experiments/{id}/compare/{other}", Summary: "Compare a variant of one experiment with a variant of another on the same dataset: pass-rate deltas and every cell whose verdict changed, regressions first", Tags: []string{"Experiments"}}, h.CompareAPIExperiments)
	huma.Register(api, huma.Operation{OperationID: "get-experiment-report", Method: http.MethodGet, Path: "/experiments/{id}/report", Summary: "An experiment's results as one self-contained HTML file that opens offline", Tags: []string{"Experiments"},
		Responses: map[string]*huma.Response{"200": {Description: "The report.", Content: map[string]*huma.MediaType{"text/html": {Schema: &huma.Schema{Type: huma.TypeString}}}}}}, h.ReportAPIExperiment)
	huma.Register(api, huma.Operation{OperationID: "rate-experiment-cell", Method: http.MethodPut, Path: "/experiments/{id}/cells/{cell}/rating", DefaultStatus: http.StatusNoContent, Summary: "Rate a cell (thumbs, 1 to 5 stars, a note): yours, kept apart from everyone else's", Tags: []string{"Experiments"}}, h.RateAPICell)
	huma.Register(api, huma.Operation{OperationID: "list-datasets", Method: http.MethodGet, Path: "/datasets", Summary: "List your datasets and the team's, newest first", Tags: []string{"Datasets"}}, h.ListAPIDatasets)
	huma.Register(api, huma.Operation{OperationID: "create-dataset", Method: http.MethodPost, Path: "/datasets", DefaultStatus: http.StatusCreated, MaxBodyBytes: handlers.MaxBody, Summary: "Save rows as a new dataset, checked as a JSON Lines file's lines are", Tags: []string{"Datasets"}}, h.CreateAPIDataset)
	group.Post("/datasets/import", h.ImportAPIDataset)
	documentDatasetImport(api)
	huma.Register(api, huma.Operation{OperationID: "get-dataset", Method: http.MethodGet, Path: "/datasets/{id}", Summary: "A dataset at a version (default: the latest) with its columns, versions and a page of its rows", Tags: []string{"Datasets"}}, h.ShowAPIDataset)
	huma.Register(api, huma.Operation{OperationID: "update-dataset", Method: http.MethodPut, Path: "/datasets/{id}", MaxBodyBytes: handlers.MaxBody, Summary: "Save rows added, changed (by key) and removed as the dataset's next version, over base_version (409 when another was saved since)", Tags: []string{"Datasets"}}, h.UpdateAPIDataset)
	huma.Register(api, huma.Operation{OperationID: "delete-dataset", Method: http.MethodDelete, Path: "/datasets/{id}", DefaultStatus: http.StatusNoContent, Summary: "Delete a dataset with its rows and versions", Tags: []string{"Datasets"}}, h.RemoveAPIDataset)
	huma.Register(api, huma.Operation{OperationID: "export-dataset", Method: http.MethodGet, Path: "/datasets/{id}/export", Summary: "A version of a dataset as a CSV or JSON Lines file that an import reads back to the same rows", Tags: []string{"Datasets"},
		Responses: map[string]*huma.Response{"200": {Description: "The file.", Content: map[string]*huma.MediaType{"text/csv": {Schema: &huma.Schema{Type: huma.TypeString}}, "application/x-ndjson": {Schema: &huma.Schema{Type: huma.TypeString}}}}}}, h.ExportAPIDataset)
	huma.Register(api, huma.Operation{OperationID: "create-arena", Method: http.MethodPost, Path: "/arenas", DefaultStatus: http.StatusCreated, Summary: "Make a blind arena: contestants, prompts, audience and mode; answers the arena with its voting link", Tags: []string{"Arenas"}}, h.CreateAPIArena)
	huma.Register(api, huma.Operation{OperationID: "list-arenas", Method: http.MethodGet, Path: "/arenas", Summary: "List the team's arenas, newest first", Tags: []string{"Arenas"}}, h.ListAPIArenas)
	huma.Register(api, huma.Operation{OperationID: "get-arena", Method: http.MethodGet, Path: "/arenas/{id}", Summary: "An arena: its link, whether its answers are made, votes and spend", Tags: []string{"Arenas"}}, h.ShowAPIArena)
	huma.Register(api, huma.Operation{OperationID: "get-arena-results", Method: http.MethodGet, Path: "/arenas/{id}/results", Summary: "An arena's ranking (Bradley–Terry with 95% bootstrap intervals), win-rate matrix, position bias, and votes per prompt and voter", Tags: []string{"Arenas"}}, h.ArenaAPIResults)
	huma.Register(api, huma.Operation{OperationID: "revoke-arena", Method: http.MethodPost, Path: "/arenas/{id}/revoke", Summary: "End an arena's voting link at once; its votes stay", Tags: []string{"Arenas"}}, h.RevokeAPIArena)
	huma.Register(api, huma.Operation{OperationID: "list-prices", Method: http.MethodGet, Path: "/prices", Summary: "Every model of every provider with the price its runs are costed at (USD per million tokens) and where it comes from", Tags: []string{"Usage"}}, h.ListAPIPrices)
	huma.Register(api, huma.Operation{OperationID: "set-price", Method: http.MethodPut, Path: "/prices/{provider}/{model}", Summary: "Admins: set a model's price, in force over the provider's listing for runs from now on", Tags: []string{"Usage"}}, h.SetAPIPrice)
	huma.Register(api, huma.Operation{OperationID: "remove-price", Method: http.MethodDelete, Path: "/prices/{provider}/{model}", DefaultStatus: http.StatusNoContent, Summary: "Admins: take a set price off a model, back to the provider's listing", Tags: []string{"Usage"}}, h.RemoveAPIPrice)
	huma.Register(api, huma.Operation{OperationID: "get-usage", Method: http.MethodGet, Path: "/usage", Summary: "Calls, errors, tokens and cost between two days, grouped, with totals: everyone's for an admin, your own for a member", Tags: []string{"Usage"}}, h.ShowAPIUsage)
	// huma does not stream: the events are a plain route behind the same
	// authentication, described in the document by hand.
	group.Get("/runs/:id/events", h.RunEvents)
	documentRunEvents(api)
	group.Get("/experiments/:id/events", h.ExperimentEvents)
	documentExperimentEvents(api)
	group.Get("/experiments/:id/export", h.ExportExperiment)
	documentExperimentExport(api)
	group.Get("/arenas/:id/votes.csv", h.ArenaVotesCSV)
	documentArenaVotes(api)
	group.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })

	// An arena's voting calls, before the pages' CSRF check (and in the
	// API's document, with the site's root as their server): a public
	// link needs no account and no CSRF token (its voter cookie is
	// SameSite=Strict, so another site cannot vote as anyone); a team
	// link needs a session (its cookie is not sent on another site's POST).
	app.Get("/a/:token", sessions.Middleware, h.LoadUser, h.ShowVotePage)
	app.Get("/a/:token/pair", sessions.Middleware, h.LoadUser, h.ArenaPair)
	app.Post("/a/:token/vote", sessions.Middleware, h.LoadUser, h.ArenaVote)
	app.Post("/a/:token/prompt", sessions.Middleware, h.LoadUser, h.ArenaPrompt)
	documentVoting(api)

	app.Use(sessions.Middleware, h.LoadUser, csrf)

	// Accounts.
	app.Get("/login", h.ShowLoginPage)
	app.Post("/login", h.RequirePasswordLogin, h.Login)
	app.Get("/signup", h.ShowSignupPage)
	app.Post("/signup", h.RequirePasswordLogin, h.Signup)
	app.Post("/logout", h.Logout)
	app.Get("/reset/:token", h.ShowResetPage)
	app.Post("/reset/:token", h.ResetPassword)
	// Single sign-on (404 when it is not set up).
	app.Get("/auth/oidc/start", h.StartSSO)
	app.Get("/auth/oidc/callback", h.FinishSSO)
	app.Get("/auth/oidc/link", h.ShowLinkPage)
	app.Post("/auth/oidc/link", h.LinkAccount)
	app.Post("/auth/oidc/link/new", h.NewSSOAccount)

	// Share links: a public link opens for anyone, a team link for members.
	app.Get("/s/:token", h.ShowSharedRun)
	app.Post("/s/:token/open", h.OpenSharedRun)
	app.Get("/p/:token", h.ShowSharedPreset)
	app.Post("/p/:token/open", h.CopySharedPreset)
	app.Get("/g/:token", h.ShowSharedGroup)
	app.Get("/g/:token/replay", h.ReplaySharedGroup)
	app.Get("/e/:token", h.ShowSharedExperiment)
	app.Get("/r/:token", h.ShowSharedArena)

	// The API's documentation, for anyone; signed in, with Try it.
	app.Get("/api", h.ShowAPIDocsPage(api.OpenAPI(), APIPrefix+"/openapi.json"))

	// Everything below needs a signed-in user.
	app.Use(h.RequireUser)

	// Pages.
	app.Get("/", h.ShowPlaygroundPage)
	app.Get("/compare", h.ShowComparePage)

	// Presets.
	app.Get("/presets", h.ShowPresetsPage)
	app.Post("/presets", h.CreatePreset)
	app.Post("/presets/import", h.ImportPreset)
	app.Get("/presets/:id", h.ShowPresetPage)
	app.Post("/presets/:id", h.UpdatePreset)
	app.Post("/presets/:id/settings", h.SavePresetSettings)
	app.Post("/presets/:id/restore", h.RestorePreset)
	app.Post("/presets/:id/delete", h.RemovePreset)
	app.Post("/presets/:id/duplicate", h.DuplicatePreset)
	app.Post("/presets/:id/open", h.OpenPreset)
	app.Post("/presets/:id/labels", h.MovePresetLabel)
	app.Post("/presets/:id/labels/remove", h.RemovePresetLabel)
	app.Post("/presets/:id/default", h.SetDefaultPreset)
	app.Post("/presets/:id/shares", h.CreatePresetShare)
	app.Get("/presets/:id/export", h.ExportPreset)
	app.Get("/presets/:id/spec", h.ShowPresetSpec)

	// Datasets: uploads (POST /datasets) take up to 50 MB (see allowUploads).
	app.Get("/datasets", h.ShowDatasetsPage)
	app.Get("/datasets/new", h.ShowNewDatasetPage)
	app.Post("/datasets", h.CreateDataset)
	app.Post("/datasets/from-runs", h.CreateDatasetFromRuns)
	app.Get("/datasets/:id", h.ShowDatasetPage)
	app.Post("/datasets/:id/rows", h.AddDatasetRow)
	app.Post("/datasets/:id/rows/remove", h.RemoveDatasetRows)
	app.Post("/datasets/:id/rows/:key", h.SaveDatasetRow)
	app.Post("/datasets/:id/delete", h.RemoveDataset)
	app.Get("/datasets/:id/export", h.ExportDataset)

	// History: a run's page and what can be done with it.
	app.Get("/history", h.ShowHistoryPage)
	app.Get("/runs/:id", h.ShowRunPage)
	app.Post("/runs/:id/star", h.StarRun)
	app.Post("/runs/:id/note", h.SaveRunNote)
	app.Post("/runs/:id/delete", h.RemoveRun)
	app.Post("/runs/:id/open", h.OpenRunInPlayground)
	app.Post("/runs/:id/rerun", h.RerunRun)
	app.Post("/runs/:id/shares", h.CreateRunShare)
	app.Post("/runs/:id/preset", h.SaveRunAsPreset)
	app.Post("/shares/:id/revoke", h.RevokeShare)

	// Playground.
	app.Get("/playground/panel", h.ShowPanel)
	app.Get("/playground/models", h.ListModels)
	app.Post("/playground/state", h.SavePlaygroundState)
	app.Post("/playground/pending", h.ResolvePendingSetup)
	app.Post("/playground/code", h.ShowCode)

	// Runs.
	app.Post("/runs", h.CreateRun)
	app.Get("/runs/:id/events", h.RunEvents)
	app.Post("/runs/:id/cancel", h.CancelRun)
	app.Get("/runs/:id/raw", h.ShowRawResponse)

	// Compare: every pane over one stream; POST /runs/:id/cancel stops one.
	app.Post("/compare/runs", h.CreateCompareRuns)
	app.Get("/groups/:id", h.ShowGroupPage)
	app.Get("/groups/:id/events", h.GroupEvents)
	app.Post("/groups/:id/cancel", h.CancelGroup)
	app.Get("/groups/:id/replay", h.ReplayGroup)
	app.Post("/groups/:id/shares", h.CreateGroupShare)
	app.Get("/experiments/:id/report", h.ShowExperimentReport)
	app.Get("/experiments/:id/compare", h.CompareExperimentsForm)
	app.Get("/experiments/:id/compare/:other", h.ShowExperimentCompare)
	app.Post("/experiments/:id/shares", h.CreateExperimentShare)
	app.Post("/groups/:id/title", h.RenameGroup)

	// History: compare, export.
	app.Get("/history/compare", h.ShowRunComparePage)
	app.Get("/history/export", h.ExportRuns)
	app.Get("/runs/:id/events.txt", h.DownloadRunEvents)

	// Experiments: a dataset's rows through variants, graded; the grid
	// listens to GET /api/v1/experiments/:id/events with the session.
	app.Get("/experiments", h.ShowExperimentsPage)
	app.Get("/experiments/new", h.ShowNewExperimentPage)
	app.Post("/experiments", h.CreateExperiment)
	app.Get("/experiments/:id", h.ShowExperimentPage)
	app.Post("/experiments/:id/cancel", h.CancelExperiment)
	app.Post("/experiments/:id/cells/:cell/rating", h.RateExperimentCell)

	// Arenas: blind votes on two answers at a time through a link
	// (/a/:token); the team sets them up and reads the results here.
	app.Get("/arenas", h.ShowArenasPage)
	app.Get("/arenas/new", h.ShowNewArenaPage)
	app.Post("/arenas", h.CreateArena)
	app.Get("/arenas/:id", h.ShowArenaPage)
	app.Post("/arenas/:id/shares", h.CreateArenaShare)
	app.Post("/arenas/:id/revoke", h.RevokeArena)

	// Usage and prices: everyone's for admins, a member's own; setting
	// a price is an admin's (checked in setPrice, as the API does).
	app.Get("/usage", h.ShowUsagePage)
	app.Get("/usage.csv", h.ExportUsage)
	app.Get("/usage/prices", h.ShowPricesPage)
	app.Post("/usage/prices", h.SavePrice)
	app.Post("/usage/prices/remove", h.RemovePrice)

	// Settings: personal keys, the account, API tokens.
	app.Get("/settings", h.ShowSettingsPage)
	app.Post("/settings/keys", h.SavePersonalKey)
	app.Post("/settings/keys/remove", h.RemovePersonalKey)
	app.Post("/settings/password", h.ChangePassword)
	app.Post("/settings/sessions/end", h.SignOutEverywhere)
	app.Post("/settings/tokens", h.CreateToken)
	app.Post("/settings/tokens/:id/revoke", h.RevokeToken)

	// Settings: the team, for admins.
	admin := h.RequireAdmin
	app.Post("/settings/team-keys", admin, h.SaveTeamKey)
	app.Post("/settings/team-keys/remove", admin, h.RemoveTeamKey)
	app.Post("/settings/providers", admin, h.CreateProvider)
	app.Post("/settings/providers/:id/remove", admin, h.RemoveProvider)
	app.Post("/settings/invites", admin, h.CreateInvite)
	app.Post("/settings/invites/:id/revoke", admin, h.RevokeInvite)
	app.Post("/settings/signup-mode", admin, h.SetSignUpMode)
	app.Post("/settings/retention", admin, h.SetRetention)
	app.Post("/settings/budgets", admin, h.SaveBudgets)
	app.Post("/settings/members/:id/role", admin, h.SetMemberRole)
	app.Post("/settings/members/:id/remove", admin, h.RemoveMember)
	app.Post("/settings/members/:id/reset", admin, h.CreatePasswordReset)

	app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
}
