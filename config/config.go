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
	// MetricsAddr is where Prometheus metrics are served on a listener of
	// their own; "" serves none there.
	MetricsAddr string
	// MetricsToken, when set, serves the metrics on the main port at
	// /metrics to requests that carry it as a bearer token.
	MetricsToken string
	// LogFormat is "text" or "json".
	LogFormat string
}

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
