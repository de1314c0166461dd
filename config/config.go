// Package config reads Knobs' settings from the environment, once, into a
// validated struct.
package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Config is every setting Knobs reads from its environment.
type Config struct {
	Addr            string
	DBPath          string
	Secret          string // "" means: generate one and keep it in the database
	SecureCookies   bool
	CerebrasKey     string
	CerebrasBaseURL string
	XAIKey          string
	XAIBaseURL      string
	// MaxOutputBytes caps the text, reasoning and tool-call bytes of one run.
	MaxOutputBytes int64
	// MaxRunsPerUser and MaxRuns bound the runs going at once, per user
	// and in all; each pane of a comparison counts.
	MaxRunsPerUser int
	MaxRuns        int
	// MaxRunDuration is the longest a run may go on.
	MaxRunDuration time.Duration
	// AllowLinkLocalUpstreams lets providers live on link-local and cloud
	// metadata addresses, which are refused by default.
	AllowLinkLocalUpstreams bool
	// StreamWriteTimeout is how long a write to an event stream may wait
	// for a client that stopped reading before the client is dropped.
	StreamWriteTimeout time.Duration
	// ExportsPerUser bounds the history exports one user downloads at once.
	ExportsPerUser int
	// ReplayStreamsPerAddress bounds the replay streams one client address
	// has open at once, over all comparisons.
	ReplayStreamsPerAddress int
	// ReplayStreamsPerLink bounds the replays of one comparison streaming
	// at once, from every address.
	ReplayStreamsPerLink int
	// BackupDir is where scheduled backups go; "" turns them off.
	BackupDir string
	// BackupEvery is the time between scheduled backups.
	BackupEvery time.Duration
	// BackupKeep is how many scheduled backups are kept.
	BackupKeep int
	// Litestream leaves checkpoints to Litestream (no automatic
	// checkpoints by Knobs), for continuous replication beside it.
	Litestream bool
	// PasswordLogin is false when password sign-in and sign-up are
	// switched off, leaving single sign-on.
	PasswordLogin bool
	// OIDC is single sign-on through an OpenID Connect provider.
	OIDC OIDC
	// MetricsAddr is where Prometheus metrics are served on a listener of
	// their own; "" serves none there.
	MetricsAddr string
	// MetricsToken, when set, serves the metrics on the main port at
	// /metrics to requests that carry it as a bearer token.
	MetricsToken string
	// LogFormat is "text" or "json".
	LogFormat string
}

// OIDC is the single sign-on setup; it is on when Issuer is set.
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string // "" for a public client (PKCE only)
	RedirectURL  string
	// AllowedDomains are the email domains that get an account at their
	// first sign-in, lower case and comma-separated; "*" allows every
	// verified email. A string keeps Config comparable.
	AllowedDomains string
	// AdminGroup, when set, makes the members of this group admins, and
	// the others members, at each sign-in.
	AdminGroup  string
	GroupsClaim string
	// Name labels the button: "Sign in with <Name>".
	Name string
	// Scopes are asked for, space-separated.
	Scopes string
}

// Enabled reports whether single sign-on is set up.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// CallbackPath is the path of Knobs that the provider sends users back
// to; KNOBS_OIDC_REDIRECT_URL must end in it.
const CallbackPath = "/auth/oidc/callback"

// variable documents one environment variable for `knobs -h` and README.
type variable struct {
	name, def, doc string
	set            func(*Config, string) error
}

var variables = []variable{
	{"KNOBS_ADDR", "127.0.0.1:8080", "address to listen on (host:port)", func(c *Config, v string) error {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("want host:port, such as 127.0.0.1:8080 or :8080")
		}
		c.Addr = v
		return nil
	}},
	{"KNOBS_DB", "./knobs.db", "path of the SQLite database file", func(c *Config, v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("must not be empty")
		}
		c.DBPath = v
		return nil
	}},
	{"KNOBS_SECRET", "", "signs sessions and encrypts stored keys (at least 32 characters); generated and kept in the database when unset", func(c *Config, v string) error {
		if v != "" && len(v) < 32 {
			return fmt.Errorf("must be at least 32 characters (it has %d)", len(v))
		}
		c.Secret = v
		return nil
	}},
	{"KNOBS_SECURE_COOKIES", "false", "mark the session cookie Secure (set true behind TLS)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, not %q", v)
		}
		c.SecureCookies = b
		return nil
	}},
	{"CEREBRAS_API_KEY", "", "Cerebras API key used when neither the user nor the team set one", func(c *Config, v string) error {
		c.CerebrasKey = strings.TrimSpace(v)
		return nil
	}},
	{"CEREBRAS_BASE_URL", "https://api.cerebras.ai", "Cerebras API base URL", func(c *Config, v string) error {
		u, err := BaseURL(v)
		c.CerebrasBaseURL = u
		return err
	}},
	{"XAI_API_KEY", "", "xAI API key used when neither the user nor the team set one", func(c *Config, v string) error {
		c.XAIKey = strings.TrimSpace(v)
		return nil
	}},
	{"XAI_BASE_URL", "https://api.x.ai", "xAI API base URL", func(c *Config, v string) error {
		u, err := BaseURL(v)
		c.XAIBaseURL = u
		return err
	}},
	{"KNOBS_MAX_OUTPUT_BYTES", "8388608", "the most text, reasoning and tool-call bytes one run may produce (8 MiB); past it the run stops with an error, its output kept", func(c *Config, v string) error {
		n, err := positive(v, "a number of bytes, such as 8388608 for 8 MiB")
		c.MaxOutputBytes = int64(n)
		return err
	}},
	{"KNOBS_MAX_RUNS_PER_USER", "8", "the most runs one user may have going at once (each comparison pane counts)", func(c *Config, v string) error {
		n, err := positive(v, "a number of runs, such as 8")
		c.MaxRunsPerUser = n
		return err
	}},
	{"KNOBS_MAX_RUNS", "200", "the most runs going at once, all users together", func(c *Config, v string) error {
		n, err := positive(v, "a number of runs, such as 200")
		c.MaxRuns = n
		return err
	}},
	{"KNOBS_MAX_RUN_DURATION", "30m", "the longest a run may go on; past it the run stops with an error, its output kept", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a duration, such as 30m or 1h30m, not %q", v)
		}
		c.MaxRunDuration = d
		return nil
	}},
	{"KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS", "false", "let providers be reached on link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254, 100.100.100.200), refused by default; loopback and LAN addresses are always allowed", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, not %q", v)
		}
		c.AllowLinkLocalUpstreams = b
		return nil
	}},
	{"KNOBS_STREAM_WRITE_TIMEOUT", "30s", "how long an event stream waits for a client that stopped reading before it drops it", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond || d > time.Hour {
			return fmt.Errorf("want a duration from 100ms to 1h, such as 30s, not %q", v)
		}
		c.StreamWriteTimeout = d
		return nil
	}},
	{"KNOBS_EXPORTS_PER_USER", "2", "history exports one user may download at once", func(c *Config, v string) error {
		n, err := positive(v, "a number of exports, such as 2")
		c.ExportsPerUser = n
		return err
	}},
	{"KNOBS_REPLAY_STREAMS_PER_ADDRESS", "4", "replay streams one client address may have open at once, over all comparisons", func(c *Config, v string) error {
		n, err := positive(v, "a number of streams, such as 4")
		c.ReplayStreamsPerAddress = n
		return err
	}},
	{"KNOBS_REPLAY_STREAMS_PER_LINK", "50", "replays of one comparison streaming at once, from anyone", func(c *Config, v string) error {
		n, err := positive(v, "a number of streams, such as 50")
		c.ReplayStreamsPerLink = n
		return err
	}},
	{"KNOBS_BACKUP_DIR", "", "directory for scheduled online backups (knobs-<UTC time>.db, written while Knobs runs); unset: none", func(c *Config, v string) error {
		c.BackupDir = strings.TrimSpace(v)
		return nil
	}},
	{"KNOBS_BACKUP_EVERY", "6h", "time between scheduled backups, at least 1m (used when KNOBS_BACKUP_DIR is set)", func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < time.Minute {
			return fmt.Errorf("want a duration of at least 1m, such as 6h or 24h, not %q", v)
		}
		c.BackupEvery = d
		return nil
	}},
	{"KNOBS_BACKUP_KEEP", "7", "how many scheduled backups to keep; the oldest beyond it are removed", func(c *Config, v string) error {
		n, err := positive(v, "a number of backups, such as 7")
		c.BackupKeep = n
		return err
	}},
	{"KNOBS_LITESTREAM", "false", "set true when Litestream replicates the database: Knobs then leaves checkpoints to Litestream", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, not %q", v)
		}
		c.Litestream = b
		return nil
	}},
	{"KNOBS_PASSWORD_LOGIN", "true", "allow sign-in and sign-up with a username and password; false leaves single sign-on only (and needs KNOBS_OIDC_ISSUER)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, not %q", v)
		}
		c.PasswordLogin = b
		return nil
	}},
	{"KNOBS_OIDC_ISSUER", "", "the OpenID Connect provider's issuer URL, such as https://accounts.google.com; turns single sign-on on", func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("want the issuer's URL, such as https://accounts.google.com, not %q", v)
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
			return fmt.Errorf("want an https URL (plain http only on this machine's loopback), not %q", v)
		}
		c.OIDC.Issuer = strings.TrimSpace(v)
		return nil
	}},
	{"KNOBS_OIDC_CLIENT_ID", "", "the client ID Knobs has at the provider", func(c *Config, v string) error {
		c.OIDC.ClientID = strings.TrimSpace(v)
		return nil
	}},
	{"KNOBS_OIDC_CLIENT_SECRET", "", "the client secret Knobs has at the provider (unset for a public client); never logged or shown", func(c *Config, v string) error {
		c.OIDC.ClientSecret = strings.TrimSpace(v)
		return nil
	}},
	{"KNOBS_OIDC_REDIRECT_URL", "", "where the provider sends users back, registered at the provider: this Knobs' address followed by " + CallbackPath, func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != CallbackPath || u.RawQuery != "" {
			return fmt.Errorf("want this Knobs' address followed by %s, such as https://knobs.example.com%s, not %q", CallbackPath, CallbackPath, v)
		}
		c.OIDC.RedirectURL = u.String()
		return nil
	}},
	{"KNOBS_OIDC_ALLOWED_DOMAINS", "", "comma-separated email domains whose users get an account at their first sign-in, such as example.com,example.org; * for any verified email; others need an invite", func(c *Config, v string) error {
		var domains []string
		for _, d := range strings.Split(v, ",") {
			d = strings.ToLower(strings.TrimSpace(d))
			switch {
			case d == "":
				continue
			case d != "*" && (strings.ContainsAny(d, "@/: ") || !strings.Contains(d, ".")):
				return fmt.Errorf("want email domains such as example.com, not %q", d)
			}
			domains = append(domains, d)
		}
		c.OIDC.AllowedDomains = strings.Join(domains, ",")
		return nil
	}},
	{"KNOBS_OIDC_ADMIN_GROUP", "", "members of this group at the provider are admins, and the others members, set at each sign-in", func(c *Config, v string) error {
		c.OIDC.AdminGroup = strings.TrimSpace(v)
		return nil
	}},
	{"KNOBS_OIDC_GROUPS_CLAIM", "groups", "the ID token claim that lists the user's groups", func(c *Config, v string) error {
		c.OIDC.GroupsClaim = strings.TrimSpace(v)
		if c.OIDC.GroupsClaim == "" {
			return errors.New("must not be empty")
		}
		return nil
	}},
	{"KNOBS_OIDC_SCOPES", "openid email profile", "the scopes Knobs asks for, space-separated; add groups where the provider needs it for the groups claim (Okta)", func(c *Config, v string) error {
		c.OIDC.Scopes = strings.Join(strings.Fields(v), " ")
		for _, s := range strings.Fields(v) {
			if s == "openid" {
				return nil
			}
		}
		return errors.New("must include openid")
	}},
	{"KNOBS_OIDC_NAME", "single sign-on", "the provider's name on the sign-in button: Sign in with <name>", func(c *Config, v string) error {
		c.OIDC.Name = strings.TrimSpace(v)
		if c.OIDC.Name == "" || len(c.OIDC.Name) > 40 {
			return errors.New("want a name of 1 to 40 characters, such as Okta")
		}
		return nil
	}},
	{"KNOBS_METRICS_ADDR", "", "serve Prometheus metrics at /metrics on this address of their own (host:port, such as 127.0.0.1:9090); unset: not served there", func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("want host:port, such as 127.0.0.1:9090, not %q", v)
		}
		c.MetricsAddr = v
		return nil
	}},
	{"KNOBS_METRICS_TOKEN", "", "serve Prometheus metrics on the main port at /metrics to requests with Authorization: Bearer <this token> (at least 16 characters); unset: /metrics is not on the main port", func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		if len(v) < 16 {
			return fmt.Errorf("must be at least 16 characters (it has %d)", len(v))
		}
		for _, r := range v {
			if r <= ' ' || r > '~' {
				return errors.New("must be printable ASCII without spaces, as a bearer token is sent")
			}
		}
		c.MetricsToken = v
		return nil
	}},
	{"KNOBS_LOG_FORMAT", "text", "log lines as text (key=value) or json, one object a line, for log shippers", func(c *Config, v string) error {
		switch v {
		case "text", "json":
			c.LogFormat = v
			return nil
		}
		return fmt.Errorf("want text or json, not %q", v)
	}},
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSignIn refuses settings that would leave no way to sign in, or a
// single sign-on set up by half.
func checkSignIn(c Config) error {
	o := c.OIDC
	if o.Enabled() && (o.ClientID == "" || o.RedirectURL == "") {
		return errors.New("config: single sign-on needs KNOBS_OIDC_CLIENT_ID and KNOBS_OIDC_REDIRECT_URL beside KNOBS_OIDC_ISSUER")
	}
	if !o.Enabled() && (o.ClientID != "" || o.ClientSecret != "" || o.RedirectURL != "") {
		return errors.New("config: KNOBS_OIDC_CLIENT_ID, KNOBS_OIDC_CLIENT_SECRET and KNOBS_OIDC_REDIRECT_URL need KNOBS_OIDC_ISSUER")
	}
	if !c.PasswordLogin && !o.Enabled() {
		return errors.New("config: KNOBS_PASSWORD_LOGIN=false needs single sign-on (KNOBS_OIDC_ISSUER and the rest), or nobody could sign in")
	}
	return nil
}

// positive parses a whole number of at least 1; want says what is
// expected, for the error.
func positive(v, want string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want %s, not %q", want, v)
	}
	return n, nil
}

// Load reads every variable through getenv; the first wrong value stops it
// with an error naming the variable.
func Load(getenv func(string) string) (Config, error) {
	var c Config
	for _, v := range variables {
		val := getenv(v.name)
		if val == "" {
			val = v.def
		}
		if err := v.set(&c, val); err != nil {
			return Config{}, fmt.Errorf("config: %s: %w", v.name, err)
		}
	}
	if err := checkSignIn(c); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Usage writes the list of variables, their defaults and meaning.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: knobs\n\nKnobs is configured through its environment:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range variables {
		def := v.def
		if def == "" {
			def = "(unset)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.name, def, v.doc)
	}
	tw.Flush()
}

// BaseURL checks an http(s) base URL and returns it without a trailing
// slash or /v1, since clients append /v1/... themselves.
func BaseURL(v string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http or https URL, such as https://api.example.com, not %q", v)
	}
	if u.User != nil {
		return "", errors.New("must not carry a user name or password")
	}
	s := strings.TrimRight(u.String(), "/")
	s = strings.TrimSuffix(s, "/v1")
	return s, nil
}
