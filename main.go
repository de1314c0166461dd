// Command knobs is a self-hosted LLM playground: one binary, one SQLite file.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"knobs/backup"
	"knobs/cli"
	"knobs/config"
	"knobs/db"
	"knobs/handlers"
	"knobs/logs"
	"knobs/markdown"
	"knobs/metrics"
	"knobs/retention"
	"knobs/runner"
	"knobs/vault"
	"knobs/web"
	"knobs/web/session"
)

func main() {
	args := os.Args[1:]
	if cli.IsCommand(args) {
		// A client command stops at the first signal: `knobs run`
		// cancels its run on the server first.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	ctx, stop := shutdownOnSignal(os.Stderr, func() { os.Exit(1) }, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, args, os.Getenv, os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "knobs:", err)
		os.Exit(1)
	}
}

// shutdownOnSignal returns a context cancelled by the first of sigs,
// which starts the graceful shutdown (runs stored with their partial
// output, streams closed). A second signal calls exit at once: someone
// pressing Ctrl-C again does not want to wait, and signal.NotifyContext
// would swallow it. stop releases the signals and ends the watcher.
func shutdownOnSignal(stderr io.Writer, exit func(), sigs ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "knobs: shutting down; signal again (Ctrl-C) to stop at once")
		cancel()
		select {
		case <-ch:
			fmt.Fprintln(stderr, "knobs: stopping at once")
			exit()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}

// run wires Knobs together and serves until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("knobs", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		config.Usage(stdout)
		fmt.Fprintln(stdout)
		cli.Usage(stdout)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unknown command %q (knobs -h lists the commands)", fs.Arg(0))
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := logs.New(stdout, cfg.LogFormat)
	// A backup directory Knobs cannot write to stops it before it opens
	// the database.
	var backups *backup.Scheduler
	// m is set below, before the scheduler starts; metrics are nil-safe.
	var m *metrics.Metrics
	if cfg.BackupDir != "" {
		backups, err = backup.New(backup.Options{DB: cfg.DBPath, Dir: cfg.BackupDir, Every: cfg.BackupEvery, Keep: cfg.BackupKeep, Grace: 5 * time.Second, Log: log,
			OnBackup: func(ok bool, d time.Duration, size int64) { m.Backup(ok, d, size) }})
		if err != nil {
			return fmt.Errorf("KNOBS_BACKUP_DIR: %w", err)
		}
	}

	// The database is locked for this process first, so that a second
	// Knobs on the same file stops before it touches anything.
	store, err := db.Open(ctx, cfg.DBPath)
	if errors.Is(err, db.ErrLocked) {
		return fmt.Errorf("%w (KNOBS_DB); stop the other Knobs first, or give this one another file", err)
	}
	if err != nil {
		return err
	}
	defer store.Close()
	if err := checkFirstAccount(ctx, cfg, store); err != nil {
		return err
	}
	if cfg.Litestream {
		if err := store.LeaveCheckpointsToLitestream(ctx); err != nil {
			return err
		}
		log.Info("checkpoints are left to Litestream (KNOBS_LITESTREAM); without it running, the write-ahead log grows", "db", cfg.DBPath)
	}

	if cfg.Secret == "" {
		secret, created, err := store.SettingOrInit(ctx, db.SettingSecret, newSecret)
		if err != nil {
			return err
		}
		// A first start without KNOBS_SECRET is the normal case, not a
		// fault: say where the secret went and what it is for.
		if created {
			log.Info("first start: generated the secret that signs sessions and encrypts stored API keys, and kept it in the database for the next start (set KNOBS_SECRET to choose your own)", "db", cfg.DBPath)
		} else {
			log.Info("using the secret kept in the database (KNOBS_SECRET is unset)", "db", cfg.DBPath)
		}
		cfg.Secret = secret
	}
	box, err := vault.New(cfg.Secret)
	if err != nil {
		return err
	}

	// The port is taken before left-over runs are touched: a Knobs that
	// cannot serve changes nothing.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (KNOBS_ADDR): %w", cfg.Addr, err)
	}
	defer ln.Close()

	// Metrics are counted only when they are served somewhere: on a
	// listener of their own, or behind a token on the main port.
	if cfg.MetricsAddr != "" || cfg.MetricsToken != "" {
		m = metrics.New()
		store.ObserveWrites(m.DBWrite)
	}
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s (KNOBS_METRICS_ADDR): %w", cfg.MetricsAddr, err)
		}
		msrv := m.Server()
		go msrv.Serve(mln)
		defer msrv.Close()
		log.Info("Prometheus metrics are served", "url", "http://"+mln.Addr().String()+"/metrics")
	}

	// Knobs starts even when left-over runs cannot be marked (a full
	// disk): their pages and event streams already show a run that no
	// process runs as interrupted, and the next start marks them.
	if n, err := store.InterruptRuns(ctx, runner.ResultFromFrames); err != nil {
		log.Error("runs left running by the last process could not be marked interrupted; they show as interrupted and are marked at the next start", "err", err, "storage_full", db.IsFull(err))
	} else if n > 0 {
		log.Warn("runs left running by the last process are marked interrupted, with their partial output", "runs", n)
	}

	// Runs past the retention period go at start and then hourly. The loop
	// starts after interrupted runs are marked, so that it purges them too,
	// and ends before the store closes, whichever way run returns.
	purgeCtx, stopPurge := context.WithCancel(ctx)
	purged := make(chan struct{})
	go func() {
		defer close(purged)
		purgeExpiredRuns(purgeCtx, store, log, time.Hour)
	}()
	defer func() { stopPurge(); <-purged }()

	// Scheduled backups run beside the server and, like the purge, end
	// before the store closes; a backup in progress gets a few seconds.
	if backups != nil {
		backupCtx, stopBackups := context.WithCancel(ctx)
		backedUp := make(chan struct{})
		go func() {
			defer close(backedUp)
			backups.Run(backupCtx)
		}()
		defer func() { stopBackups(); <-backedUp }()
	}

	md := markdown.New()
	runs := runner.New(store, log, runner.Options{
		Render:         md.Render,
		MaxOutputBytes: cfg.MaxOutputBytes,
		MaxDuration:    cfg.MaxRunDuration,
		MaxRunsPerUser: cfg.MaxRunsPerUser,
		MaxRuns:        cfg.MaxRuns,
		Metrics:        m,
	})
	h := handlers.New(handlers.Options{Store: store, Box: box, Config: cfg, Log: log, Runner: runs, Metrics: m, Stopping: ctx.Done()})
	app := web.New(h, session.NewManager(cfg.Secret, cfg.SecureCookies), log)

	log.Info("Knobs is listening", "url", "http://"+ln.Addr().String(), "db", cfg.DBPath)
	// Experiments a stop cut short go on where they stood: no cell that
	// finished is sent upstream again.
	if err := h.ResumeExperiments(ctx); err != nil {
		log.Error("resuming experiments", "err", err)
	}

	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	if cfg.OIDC.Enabled() {
		// A provider Knobs cannot reach is said at start, not first at a
		// sign-in; Knobs serves either way and tries again then.
		if err := h.CheckSSO(ctx); err != nil {
			log.Warn("single sign-on: the identity provider cannot be reached or read; sign-ins will try again", "issuer", cfg.OIDC.Issuer, "err", err)
		} else {
			log.Info("single sign-on is on", "issuer", cfg.OIDC.Issuer, "password_login", cfg.PasswordLogin)
		}
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// Runs first: each stores its partial output and ends its stream,
	// which lets the server close those connections.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Experiments first, left running in the database to resume at the
	// next start; then their runs stop with the others.
	if err := h.ShutdownExperiments(shutdownCtx); err != nil {
		log.Error("experiments did not stop in time", "err", err)
	}
	if err := runs.Shutdown(shutdownCtx); err != nil {
		log.Error("runs did not stop in time", "err", err)
	}
	if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// A stop that comes before the server began to serve finds no
	// listener to close: closing it here ends the serve either way.
	ln.Close()
	if err := <-served; err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// purgeExpiredRuns deletes the runs past the retention period at once and
// then every interval, until ctx ends.
func purgeExpiredRuns(ctx context.Context, store *db.Store, log *slog.Logger, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if _, err := retention.PurgeExpired(ctx, store, time.Now(), log); err != nil && ctx.Err() == nil {
			log.Error("purging runs past the retention period", "err", err)
		}
		if err := store.PurgeSessions(ctx); err != nil && ctx.Err() == nil {
			log.Error("purging unused sessions", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// checkFirstAccount refuses to start a Knobs with no account yet that no
// one could ever sign in to: password sign-in off, and no single sign-on
// policy (allowed domains, admin group) to make the first account, the
// admin, by; invites need an admin to exist. Once there are accounts,
// invites alone are a valid way in.
func checkFirstAccount(ctx context.Context, cfg config.Config, store *db.Store) error {
	if cfg.PasswordLogin || cfg.OIDC.AllowedDomains != "" || cfg.OIDC.AdminGroup != "" {
		return nil
	}
	n, err := store.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("config: this Knobs has no account yet and KNOBS_PASSWORD_LOGIN=false: set KNOBS_OIDC_ALLOWED_DOMAINS or KNOBS_OIDC_ADMIN_GROUP so that single sign-on can make the first account, the admin")
	}
	return nil
}
