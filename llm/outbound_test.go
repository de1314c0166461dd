package llm

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Tests of what Knobs sends out and what it lets back in: which addresses
// it dials, redirects, foreign answers, keys echoed into the output, and
// keep-alive comments.

func TestACloudMetadataAddressIsNeverDialled(t *testing.T) {
	for _, base := range []string{
		"http://169.254.169.254",          // AWS, GCP, Azure instance metadata
		"http://169.254.170.2",            // ECS task credentials
		"http://[fd00:ec2::254]",          // AWS metadata over IPv6
		"http://100.100.100.200",          // Alibaba Cloud metadata
		"http://[::ffff:169.254.169.254]", // the same, IPv4-mapped
		"http://metadata.google.internal",
	} {
		t.Run(base, func(t *testing.T) {
			c := NewClient(ProviderConfig{ID: "custom", Dialect: DialectOpenAI, BaseURL: base, Key: "sk-would-be-stolen-0000", FirstByteTimeout: 3 * time.Second})
			t.Cleanup(c.CloseIdleConnections)
			_, err, _ := run(t, c, chatSpec())
			if err == nil || err.Kind != ErrNetwork || !strings.Contains(err.Message, "KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS") {
				t.Fatalf("err = %s, want a refusal that names KNOBS_ALLOW_LINK_LOCAL_UPSTREAMS", describe(err))
			}
			if _, err := c.Models(context.Background()); err == nil || !strings.Contains(err.Error(), "link-local") {
				t.Errorf("models: %v, want the same refusal", err)
			}
		})
	}
}

func TestTheDialerRefusesAMetadataAddressThatDNSGave(t *testing.T) {
	// A name is resolved before Control runs: what it sees is the address
	// being connected to, whatever name led there.
	d := guardedDialer()
	for _, addr := range []string{"169.254.169.254:80", "[fd00:ec2::254]:80", "[fe80::1%lo]:80"} {
		conn, err := d.DialContext(context.Background(), "tcp", addr)
		var refused *UpstreamAddressError
		if !errors.As(err, &refused) {
			if conn != nil {
				conn.Close()
			}
			t.Errorf("dial %s: %v, want a refusal", addr, err)
		}
	}
	ok := newUpstream(t, jsonAnswer(200, `{"object":"list","data":[{"id":"m"}]}`))
	_, port, _ := net.SplitHostPort(ok.Listener.Addr().String())
	conn, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("localhost", port))
	if err != nil {
		t.Fatalf("dial localhost: %v, want loopback allowed", err)
	}
	conn.Close()
}

func TestUpstreamAddressRules(t *testing.T) {
	for _, tt := range []struct {
		ip      string
		refused bool
	}{
		{"169.254.169.254", true},
		{"169.254.0.1", true},
		{"fe80::1", true},
		{"fd00:ec2::254", true},
		{"100.100.100.200", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of 169.254.169.254
		{"127.0.0.1", false},         // Ollama on this machine
		{"::1", false},
		{"10.0.0.5", false}, // vLLM on the LAN
		{"192.168.1.20", false},
		{"172.16.3.4", false},
		{"fd00::1", false},
		{"100.100.100.201", false},
		{"104.18.2.3", false},
	} {
		err := checkUpstreamIP(tt.ip)
		if (err != nil) != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.ip, err != nil, tt.refused)
		}
	}
}

func TestARedirectIsNeverFollowed(t *testing.T) {
	const key = "sk-redirect-victim-key-123456"
	elsewhere := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			jsonAnswer(200, `{"object":"list","data":[{"id":"stolen"}]}`)(w, r)
			return
		}
		streamOf(chatChunk(`{"content":"hi"}`), data("[DONE]"))(w, r)
	})
	moved := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	c := moved.client(t, DialectOpenAI, key)
	_, err, _ := run(t, c, chatSpec())
	if err == nil || !strings.Contains(err.Message, "redirect") || !strings.Contains(err.Message, elsewhere.Listener.Addr().String()) {
		t.Errorf("stream err = %s, want an error saying the provider redirected, and where", describe(err))
	}
	list, merr := c.Models(context.Background())
	if merr == nil || !strings.Contains(merr.Error(), "redirect") {
		t.Errorf("models err = %v, want a redirect error", merr)
	}
	for _, m := range list {
		if m.ID == "stolen" {
			t.Error("the models list came from the redirect target")
		}
	}
	if n := elsewhere.count(); n > 0 {
		t.Errorf("the redirect target got %d requests; Authorization %q", n, elsewhere.last(t).Header.Get("Authorization"))
	}
}

func TestAForeignErrorPageIsShownAsAShortExcerpt(t *testing.T) {
	page := "Bad gateway: " + strings.Repeat("upstream proxy details ", 2000)
	for _, tt := range []struct {
		name, ctype, body string
	}{
		{"plain text", "text/plain", page},
		{"html without a title", "text/html", "<html><body><h1>502</h1><p>" + page + "</p></body></html>"},
		{"html with a long title", "text/html", "<html><head><title>" + page + "</title></head></html>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, tt.body)
			})
			_, err, s := run(t, u.client(t, DialectOpenAI, ""), chatSpec())
			if err == nil || err.Status != http.StatusBadGateway {
				t.Fatalf("err = %s, want the 502", describe(err))
			}
			if n := len([]rune(err.Message)); n > 310 {
				t.Errorf("the message has %d characters, want at most about 300", n)
			}
			if strings.Contains(err.Message, "<") {
				t.Errorf("the message holds markup: %.80q", err.Message)
			}
			if raw := s.RawResponse(); len(raw) > 600 {
				t.Errorf("the raw view keeps %d bytes of a page that is not the provider's, want a short excerpt", len(raw))
			}
		})
	}
}

func TestAKeyEchoedIntoTheOutputIsRedactedEvenSplitAcrossChunks(t *testing.T) {
	const key = "sk-echo-0123456789abcdef"
	u := newUpstream(t, streamOf(
		chatChunk(`{"content":"your key is sk-echo-01"}`),
		chatChunk(`{"content":"23456789"}`),
		chatChunk(`{"content":"abcdef, and sk-"}`),
		chatChunk(`{"content":"echo is not it"}`),
		chatChunk(`{"reasoning":"I saw sk-echo-0123"}`),
		chatChunk(`{"reasoning":"456789abcdef in the header"}`),
		chatChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"leak","arguments":"{\"k\":\"sk-echo-0123456"}}]}`),
		chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"789abcdef\"}"}}]}`),
		chatChunk(`{"content":" ends with sk-echo-0123456789abcd"}`),
		chatChunk(`{"content":"ef"}`),
		data("[DONE]"),
	))
	evs, err, s := run(t, u.client(t, DialectOpenAI, key), chatSpec())
	if err != nil {
		t.Fatalf("err = %s", describe(err))
	}
	for _, e := range evs {
		if strings.Contains(e.Text, key) || (e.ToolCall != nil && strings.Contains(e.ToolCall.Arguments, key)) {
			t.Errorf("event %s holds the key: %+v", e.Kind, e)
		}
	}
	if got, want := texts(evs, EventDelta), "your key is ***, and sk-echo is not it ends with ***"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if got, want := texts(evs, EventReasoning), "I saw *** in the header"; got != want {
		t.Errorf("reasoning = %q, want %q", got, want)
	}
	calls := s.ToolCalls(0)
	if len(calls) != 1 || calls[0].Arguments != `{"k":"***"}` {
		t.Errorf("tool calls = %+v, want the arguments with the key redacted", calls)
	}
	var last *ToolCall
	for _, e := range evs {
		if e.Kind == EventToolCall {
			last = e.ToolCall
		}
	}
	if last == nil || last.Arguments != `{"k":"***"}` {
		t.Errorf("the last tool_call event holds %+v, want the whole redacted arguments", last)
	}
}

func TestKeepAliveCommentsDoNotKeepAStreamAlive(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeChunks(w, chatChunk(`{"content":"Half"}`))
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				writeChunks(w, ": ping\n\n")
			}
		}
	})
	c := NewClient(ProviderConfig{ID: "c", Dialect: DialectOpenAI, BaseURL: u.URL, IdleTimeout: 200 * time.Millisecond})
	t.Cleanup(c.CloseIdleConnections)
	type result struct {
		evs []Event
		err *Error
	}
	got := make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		s := c.Stream(ctx, chatSpec())
		var evs []Event
		for s.Next() {
			evs = append(evs, s.Event())
		}
		s.Close()
		got <- result{evs, s.Err()}
	}()
	select {
	case r := <-got:
		if r.err == nil || r.err.Kind != ErrTimeout {
			t.Fatalf("err = %s, want a timeout", describe(r.err))
		}
		if texts(r.evs, EventDelta) != "Half" {
			t.Errorf("kept %q, want the text that arrived", texts(r.evs, EventDelta))
		}
	case <-time.After(15 * time.Second):
		cancel()
		<-got
		t.Fatal("a provider sending only keep-alive comments kept the stream open past its idle timeout")
	}
}
