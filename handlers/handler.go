// Package handlers has one file per action of Knobs' web surface. Each
// handler runs straight through: load, validate, render or redirect.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"knobs/config"
	"knobs/db"
	"knobs/experiment"
	"knobs/llm"
	"knobs/llm/sim"
	"knobs/markdown"
	"knobs/metrics"
	"knobs/runner"
	"knobs/vault"
	"knobs/views"
	"knobs/web/session"
)

// Handler holds what every action needs.
type Handler struct {
	store      *db.Store
	box        *vault.Box
	cfg        config.Config
	log        *slog.Logger
	logins     *Limiter
	bcryptCost int
	dummyHash  []byte // see Login
	runner     *runner.Runner
	md         *markdown.Renderer
	clients    clients
	simConfig  llm.ProviderConfig
	exports    *slots // history exports downloading, per user
	replays    *slots // replay streams, per comparison and per address
	replayData *replayCache
	shared     *shareStreams // replays streaming through each share link
	now        func() time.Time
	// experiments runs experiments in the background; its runs start
	// through launchCell.
	experiments *experiment.Executor
	// arenas are the arenas whose answers are being made ahead.
	arenas arenaJobs
	voters *Limiter // what one address asks of the arenas' voting links
	// sso signs people in through an OpenID Connect provider; nil when
	// single sign-on is not set up.
	sso *sso
	// background is the context of work that outlives a request (an
	// arena's answers), ended by ShutdownExperiments; bg counts it.
	background     context.Context
	stopBackground context.CancelFunc
	bg             sync.WaitGroup
	// metrics counts event streams and is served at /metrics; nil: off.
	metrics *metrics.Metrics
	// stopping is closed when Knobs begins to shut down: /readyz fails.
	stopping <-chan struct{}
	// ready is the last readiness probe, shared for a second.
	ready readiness
	// spend is what the budgets read spending from; budget holds what
	// runs going may cost (budget.go).
	spend  spendSource
	budget *budgetGate
}

// MaxBody bounds a request body, and a run's body once its variables are
// filled in: web serves with it as its BodyLimit. A run's spec with long
// messages, tools and schemas fits many times over; it is above the 1 MiB
// a preset file may have, so that an oversized import reaches the handler
// and is refused with a message about the file rather than a cut
// connection.
const MaxBody = 16 << 20

// Options are the Handler's dependencies.
type Options struct {
	Store  *db.Store
	Box    *vault.Box
	Config config.Config
	Log    *slog.Logger
	// BcryptCost is the password hashing cost; zero means bcrypt.DefaultCost.
	// Tests lower it: the race detector makes bcrypt ten times slower.
	BcryptCost int
	// Runner runs the requests.
	Runner *runner.Runner
	// Sim is the simulator provider's config; zero means the in-process one.
	Sim llm.ProviderConfig
	// Markdown renders stored answers; nil means a new renderer.
	Markdown *markdown.Renderer
	// Now is the clock API tokens are made, used and expire by; nil means
	// time.Now. Tests move it to expire a token without waiting.
	Now func() time.Time
	// Experiments tune how experiments retry; zero values take the
	// defaults. Tests shorten the waits.
	Experiments experiment.Options
	// Metrics counts event streams and is what /metrics serves; nil
	// means metrics are off.
	Metrics *metrics.Metrics
	// Stopping is closed when Knobs begins to shut down, so that /readyz
	// answers 503 from then on; nil never closes.
	Stopping <-chan struct{}
}

// New builds the Handler.
func New(o Options) *Handler {
	cost := o.BcryptCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	// Hashed at the real cost, so that signing in as an unknown user takes
	// as long as with a wrong password.
	dummy, err := bcrypt.GenerateFromPassword([]byte("knobs-dummy-password"), cost)
	if err != nil {
		panic("handlers: bcrypt cost " + strconv.Itoa(cost) + ": " + err.Error())
	}
	simCfg := o.Sim
	if simCfg.Dialect == "" {
		simCfg = sim.Config()
	}
	md := o.Markdown
	if md == nil {
		md = markdown.New()
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	h := &Handler{
		now:        now,
		md:         md,
		runner:     o.Runner,
		simConfig:  simCfg,
		store:      o.Store,
		box:        o.Box,
		cfg:        o.Config,
		log:        o.Log,
		logins:     NewLimiter(10, loginWindow),
		voters:     NewLimiter(120, time.Minute),
		bcryptCost: cost,
		dummyHash:  dummy,
		exports:    newSlots(),
		replays:    newSlots(),
		replayData: newReplayCache(),
		shared:     newShareStreams(),
		sso:        newSSO(o.Config, now),
		metrics:    o.Metrics,
		stopping:   o.Stopping,
		spend:      o.Store,
		budget:     newBudgetGate(),
	}
	h.experiments = experiment.New(o.Store, h.launchCell, o.Log, o.Experiments)
	h.background, h.stopBackground = context.WithCancel(context.Background())
	return h
}

// goBackground runs fn in the background, counted for the shutdown.
func (h *Handler) goBackground(fn func()) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		fn()
	}()
}

// ResumeExperiments continues the experiments a stop of Knobs cut short;
// main calls it once the server is ready.
func (h *Handler) ResumeExperiments(ctx context.Context) error {
	arenas, err := h.store.PreparingArenas(ctx)
	if err != nil {
		return err
	}
	for _, a := range arenas {
		h.goBackground(func() { h.prepareArena(a) })
	}
	return h.experiments.Resume(ctx)
}

// ShutdownExperiments stops every experiment for a stop of Knobs,
// leaving them to resume at the next start; before the runner's
// Shutdown, which then stores their runs' partial output.
func (h *Handler) ShutdownExperiments(ctx context.Context) error {
	h.stopBackground()
	err := h.experiments.Shutdown(ctx)
	done := make(chan struct{})
	go func() { h.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return err
}

const userKey = "knobs.user"

// CurrentUser returns the signed-in user that LoadUser found, if any.
func CurrentUser(c *fiber.Ctx) (db.User, bool) {
	u, ok := c.Locals(userKey).(db.User)
	return u, ok
}

// LoadUser puts the signed-in user, if any, in the request. A cookie
// whose server-side session has ended (signed out, signed out
// everywhere, password changed, demoted, removed) is signed out.
func (h *Handler) LoadUser(c *fiber.Ctx) error {
	s := session.From(c)
	if s.Token != "" {
		u, err := h.store.SessionUser(c.UserContext(), s.Token)
		switch {
		case err == nil:
			c.Locals(userKey, u)
		case errors.Is(err, db.ErrNotFound):
			s.SignOut()
		default:
			return err
		}
	}
	return c.Next()
}

// RequireUser sends visitors who are not signed in to the sign-in page.
func (h *Handler) RequireUser(c *fiber.Ctx) error {
	if _, ok := CurrentUser(c); ok {
		return c.Next()
	}
	if c.Method() != fiber.MethodGet || strings.HasPrefix(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON) {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in first.")
	}
	return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
}

// RequireAdmin refuses members with 403.
func (h *Handler) RequireAdmin(c *fiber.Ctx) error {
	if u, ok := CurrentUser(c); ok && u.IsAdmin() {
		return c.Next()
	}
	return fiber.NewError(fiber.StatusForbidden, "Only an admin can do that.")
}

// page is the layout's view model for this request.
func (h *Handler) page(c *fiber.Ctx, title, nav string) views.Page {
	s := session.From(c)
	p := views.Page{Title: title, Nav: nav, CSRF: s.CSRF, Flash: s.TakeFlash()}
	if u, ok := CurrentUser(c); ok {
		p.User = &views.User{Name: u.Username, IsAdmin: u.IsAdmin()}
	}
	return p
}

// Render writes a templ component as the HTML answer.
func Render(c *fiber.Ctx, status int, comp templ.Component) error {
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// redirectWith sets a one-time message and sends the browser to path.
func redirectWith(c *fiber.Ctx, path, flash string) error {
	if flash != "" {
		session.From(c).SetFlash(flash)
	}
	return c.Redirect(path, fiber.StatusSeeOther)
}

// ctx is the request's context for store calls.
func ctx(c *fiber.Ctx) context.Context { return c.UserContext() }

// pathID reads the :id route parameter as a row id; anything but a
// positive integer is a 404, "There is no such <what>.", like an unknown id.
func pathID(c *fiber.Ctx, what string) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fiber.NewError(fiber.StatusNotFound, "There is no such "+what+".")
	}
	return id, nil
}

// loginKey is the sign-in limiter's key for an account.
func loginKey(username string) string { return "user:" + strings.ToLower(username) }
