package config_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"knobs/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Addr:                    "127.0.0.1:8080",
		DBPath:                  "./knobs.db",
		CerebrasBaseURL:         "https://api.cerebras.ai",
		XAIBaseURL:              "https://api.x.ai",
		MaxOutputBytes:          8 << 20,
		MaxRunsPerUser:          8,
		MaxRuns:                 200,
		MaxRunDuration:          30 * time.Minute,
		StreamWriteTimeout:      30 * time.Second,
		ExportsPerUser:          2,
		ReplayStreamsPerAddress: 4,
		ReplayStreamsPerLink:    50,
		BackupEvery:             6 * time.Hour,
		BackupKeep:              7,
		PasswordLogin:           true,
		OIDC:                    config.OIDC{GroupsClaim: "groups", Name: "single sign-on", Scopes: "openid email profile"},
		LogFormat:               "text",
	}
	if c != want {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

func TestLoadValues(t *testing.T) {
	c, err := config.Load(env(map[string]string{
		"KNOBS_ADDR":                       ":9000",
		"KNOBS_DB":                         "/data/k.db",
		"KNOBS_SECRET":                     strings.Repeat("s", 32),
		"KNOBS_SECURE_COOKIES":             "true",
		"CEREBRAS_API_KEY":                 "  csk-abc \n",
		"CEREBRAS_BASE_URL":                "http://localhost:9999/v1/",
		"XAI_API_KEY":                      "xai-abc",
		"XAI_BASE_URL":                     "https://proxy.example/xai/",
		"KNOBS_MAX_OUTPUT_BYTES":           "65536",
		"KNOBS_MAX_RUNS_PER_USER":          "3",
		"KNOBS_MAX_RUNS":                   "50",
		"KNOBS_MAX_RUN_DURATION":           "1h30m",
		"KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS": "true",
		"KNOBS_STREAM_WRITE_TIMEOUT":       "2s",
		"KNOBS_EXPORTS_PER_USER":           "3",
		"KNOBS_REPLAY_STREAMS_PER_ADDRESS": "5",
		"KNOBS_REPLAY_STREAMS_PER_LINK":    "7",
		"KNOBS_BACKUP_DIR":                 "/backups",
		"KNOBS_BACKUP_EVERY":               "24h",
		"KNOBS_BACKUP_KEEP":                "30",
		"KNOBS_LITESTREAM":                 "true",
		"KNOBS_METRICS_ADDR":               "127.0.0.1:9090",
		"KNOBS_METRICS_TOKEN":              "metrics-token-0123456789",
		"KNOBS_LOG_FORMAT":                 "json",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Addr:                    ":9000",
		DBPath:                  "/data/k.db",
		Secret:                  strings.Repeat("s", 32),
		SecureCookies:           true,
		CerebrasKey:             "csk-abc",
		CerebrasBaseURL:         "http://localhost:9999",
		XAIKey:                  "xai-abc",
		XAIBaseURL:              "https://proxy.example/xai",
		MaxOutputBytes:          65536,
		MaxRunsPerUser:          3,
		MaxRuns:                 50,
		MaxRunDuration:          90 * time.Minute,
		AllowLinkLocalUpstreams: true,
		StreamWriteTimeout:      2 * time.Second,
		ExportsPerUser:          3,
		ReplayStreamsPerAddress: 5,
		ReplayStreamsPerLink:    7,
		BackupDir:               "/backups",
		BackupEvery:             24 * time.Hour,
		BackupKeep:              30,
		Litestream:              true,
		PasswordLogin:           true,
		OIDC:                    config.OIDC{GroupsClaim: "groups", Name: "single sign-on", Scopes: "openid email profile"},
		MetricsAddr:             "127.0.0.1:9090",
		MetricsToken:            "metrics-token-0123456789",
		LogFormat:               "json",
	}
	if c != want {
		t.Errorf("loaded:\n got %+v\nwant %+v", c, want)
	}
}

func TestWrongValueNamesItsVariable(t *testing.T) {
	for _, tt := range []struct{ name, value string }{
		{"KNOBS_ADDR", "8080"},
		{"KNOBS_ADDR", "localhost"},
		{"KNOBS_DB", "   "},
		{"KNOBS_SECRET", "too-short"},
		{"KNOBS_SECURE_COOKIES", "maybe"},
		{"CEREBRAS_BASE_URL", "api.cerebras.ai"},
		{"CEREBRAS_BASE_URL", "ftp://api.cerebras.ai"},
		{"XAI_BASE_URL", "https://"},
		{"XAI_BASE_URL", "https://user:pw@api.x.ai"},
		{"KNOBS_MAX_OUTPUT_BYTES", "0"},
		{"KNOBS_MAX_OUTPUT_BYTES", "8MB"},
		{"KNOBS_MAX_RUNS_PER_USER", "-1"},
		{"KNOBS_MAX_RUNS", "lots"},
		{"KNOBS_MAX_RUN_DURATION", "30"},
		{"KNOBS_MAX_RUN_DURATION", "0s"},
		{"KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS", "sometimes"},
		{"KNOBS_STREAM_WRITE_TIMEOUT", "30"},
		{"KNOBS_STREAM_WRITE_TIMEOUT", "1ms"},
		{"KNOBS_EXPORTS_PER_USER", "0"},
		{"KNOBS_REPLAY_STREAMS_PER_ADDRESS", "many"},
		{"KNOBS_REPLAY_STREAMS_PER_LINK", "-1"},
		{"KNOBS_BACKUP_EVERY", "6"},
		{"KNOBS_BACKUP_EVERY", "30s"},
		{"KNOBS_BACKUP_KEEP", "0"},
		{"KNOBS_LITESTREAM", "yes please"},
		{"KNOBS_METRICS_ADDR", "9090"},
		{"KNOBS_METRICS_TOKEN", "short-secret"},
		{"KNOBS_METRICS_TOKEN", "a token with spaces in it"},
		{"KNOBS_LOG_FORMAT", "yaml"},
	} {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			_, err := config.Load(env(map[string]string{tt.name: tt.value}))
			if err == nil {
				t.Fatalf("%s=%q accepted", tt.name, tt.value)
			}
			if !strings.Contains(err.Error(), tt.name+":") {
				t.Errorf("error %q does not name %s", err, tt.name)
			}
			if (tt.name == "KNOBS_SECRET" || tt.name == "KNOBS_METRICS_TOKEN") && strings.Contains(err.Error(), tt.value) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://api.x.ai", "https://api.x.ai"},
		{"https://api.x.ai/", "https://api.x.ai"},
		{"https://api.x.ai/v1", "https://api.x.ai"},
		{"https://api.x.ai/v1/", "https://api.x.ai"},
		{"  https://api.groq.com/openai/v1  ", "https://api.groq.com/openai"},
		{"http://localhost:11434", "http://localhost:11434"},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000"},
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api"},
		{"https://example.com/v10", "https://example.com/v10"},
	} {
		got, err := config.BaseURL(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "localhost:11434", "ftp://x", "https://", "https://a:b@x.ai", "javascript:alert(1)"} {
		if got, err := config.BaseURL(bad); err == nil {
			t.Errorf("BaseURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestUsageListsEveryVariable(t *testing.T) {
	var b bytes.Buffer
	config.Usage(&b)
	for _, name := range []string{"KNOBS_ADDR", "KNOBS_DB", "KNOBS_SECRET", "KNOBS_SECURE_COOKIES", "CEREBRAS_API_KEY", "CEREBRAS_BASE_URL", "XAI_API_KEY", "XAI_BASE_URL", "KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS", "KNOBS_STREAM_WRITE_TIMEOUT"} {
		if !strings.Contains(b.String(), name) {
			t.Errorf("usage lacks %s:\n%s", name, b.String())
		}
	}
	if !strings.Contains(b.String(), "127.0.0.1:8080") {
		t.Errorf("usage does not show the default address")
	}
}
