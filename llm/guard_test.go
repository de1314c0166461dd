package llm

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAChoiceIndexNoRequestCanAskForIsRefused(t *testing.T) {
	u := newUpstream(t, streamOf(
		chatChunk(`{"content":"ok"}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":2000000000,"delta":{"content":"boom"}}]}`),
	))
	evs, err, _ := run(t, u.client(t, DialectCerebras, ""), chatSpec())
	if err == nil || err.Kind != ErrBadResponse || !strings.Contains(err.Message, "2000000000") {
		t.Fatalf("err = %s, want bad_response naming the index", describe(err))
	}
	for _, e := range evs {
		if e.Choice != 0 {
			t.Errorf("an event for choice %d got through", e.Choice)
		}
	}
	if texts(evs, EventDelta) != "ok" {
		t.Errorf("the text before the bad chunk = %q, want it kept", texts(evs, EventDelta))
	}
}

func TestAProviderThatGoesSilentMidStreamTimesOut(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writeChunks(w, chatChunk(`{"content":"Half"}`))
		<-r.Context().Done()
	})
	c := NewClient(ProviderConfig{ID: "c", Dialect: DialectCerebras, BaseURL: u.URL, IdleTimeout: 150 * time.Millisecond})
	t.Cleanup(c.CloseIdleConnections)
	evs, err, _ := run(t, c, chatSpec())
	if err == nil || err.Kind != ErrTimeout || !strings.Contains(err.Message, "silent") {
		t.Fatalf("err = %s, want a timeout saying the provider went silent", describe(err))
	}
	if texts(evs, EventDelta) != "Half" {
		t.Errorf("kept %q, want the text that arrived", texts(evs, EventDelta))
	}
}

func TestSteadyTokensKeepAStreamAliveLongerThanTheIdleTimeout(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		for i := 0; i < 8; i++ {
			writeChunks(w, chatChunk(`{"content":"x"}`))
			time.Sleep(40 * time.Millisecond)
		}
		writeChunks(w, data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), data("[DONE]"))
	})
	c := NewClient(ProviderConfig{ID: "c", Dialect: DialectCerebras, BaseURL: u.URL, IdleTimeout: 150 * time.Millisecond})
	t.Cleanup(c.CloseIdleConnections)
	evs, err, _ := run(t, c, chatSpec())
	if err != nil || texts(evs, EventDelta) != "xxxxxxxx" {
		t.Fatalf("err %s, text %q: a stream that keeps talking must not time out", describe(err), texts(evs, EventDelta))
	}
}

func TestAnEchoedKeyIsRedactedFromEveryErrorField(t *testing.T) {
	const key = "xai-THE-SECRET-KEY-0123456789"
	u := newUpstream(t, jsonAnswer(400, `{"code":"bad key `+key+`","error":"Incorrect API key provided: `+key+`"}`))
	_, err, s := run(t, u.client(t, DialectXAI, key), chatSpec())
	if err == nil {
		t.Fatal("no error")
	}
	for _, f := range []string{err.Message, err.Code, err.Type, err.Field} {
		if strings.Contains(f, key) {
			t.Errorf("error field %q holds the key", f)
		}
	}
	if strings.Contains(string(s.RawResponse()), key) {
		t.Error("the raw response holds the key")
	}
	_ = context.Background
}
