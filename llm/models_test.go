package llm

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func modelByID(ms []Model, id string) (Model, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

func TestModelsCerebras(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("format") == "openrouter" {
			io.WriteString(w, `{"data":[
				{"id":"gpt-oss-120b","name":"GPT OSS","context_length":131072,"max_output_length":40960,"pricing":{"prompt":"0.00000035","completion":"0.00000075"},"supported_parameters":["temperature"]},
				{"id":"new-model-9","context_length":65536,"max_output_length":8192,"pricing":{"prompt":"0.000001","completion":"0.000002","input_cache_read":"0.0000005","internal_reasoning":"0.000004"}}]}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"new-model-9","object":"model","created":1,"owned_by":"Cerebras"},{"id":"gpt-oss-120b","object":"model","created":1,"owned_by":"OpenAI"}]}`)
	})
	c := u.client(t, DialectCerebras, "csk")
	ms, err := c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].ID != "gpt-oss-120b" || ms[1].ID != "new-model-9" {
		t.Fatalf("models = %+v", ms)
	}
	g := ms[0]
	if g.Source != "api" || g.ContextLength != 131072 || g.MaxOutput != 40960 || !near(g.PromptPrice, 0.35) || !near(g.CompletionPrice, 0.75) || g.OwnedBy != "OpenAI" {
		t.Errorf("gpt-oss-120b = %+v", g)
	}
	if k, ok := LookupModel(DialectCerebras, "gpt-oss-120b"); ok && (g.Reasoning != k.Reasoning || len(g.ReasoningEfforts) != len(k.ReasoningEfforts)) {
		t.Errorf("known capabilities not merged: %+v, known %+v", g, k)
	}
	n := ms[1]
	if n.Reasoning || n.MaxOutput != 8192 || !near(n.PromptPrice, 1) || !near(n.CompletionPrice, 2) || !near(n.CachedPrice, 0.5) || !near(n.ReasoningPrice, 4) || n.PriceSource != PriceListing {
		t.Errorf("new-model-9 = %+v", n)
	}
	if got := u.last(t).Header.Get("Authorization"); got != "Bearer csk" {
		t.Errorf("Authorization = %q", got)
	}

	// Cached: no new request.
	before := u.count()
	ms2, err := c.Models(context.Background())
	if err != nil || len(ms2) != 2 || u.count() != before {
		t.Fatalf("second call: %d models, err %v, %d new requests", len(ms2), err, u.count()-before)
	}
	ms2[0].ID = "changed"
	if ms3, _ := c.Models(context.Background()); ms3[0].ID != "gpt-oss-120b" {
		t.Fatal("callers share the cached slice")
	}
}

func TestModelsXAI(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/language-models":
			io.WriteString(w, `{"models":[{"id":"grok-4-0709","fingerprint":"fp","created":1,"object":"model","owned_by":"xai","version":"1","input_modalities":["text"],"output_modalities":["text"],"prompt_text_token_price":30000,"cached_prompt_text_token_price":7500,"completion_text_token_price":150000,"aliases":["grok-4","grok-4-latest"]}]}`)
		default:
			io.WriteString(w, `{"object":"list","data":[{"id":"grok-4-0709","object":"model","owned_by":"xai"},{"id":"grok-9","object":"model","owned_by":"xai"}]}`)
		}
	})
	ms, err := u.client(t, DialectXAI, "xai").Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g, ok := modelByID(ms, "grok-4-0709")
	if !ok || !near(g.PromptPrice, 3) || !near(g.CachedPrice, 0.75) || !near(g.CompletionPrice, 15) || g.Source != "api" || g.PriceSource != PriceListing {
		t.Fatalf("grok-4-0709 = %+v (want $3/$15 per million)", g)
	}
	if k, ok := LookupModel(DialectXAI, "grok-4-0709"); ok && g.Reasoning != k.Reasoning {
		t.Errorf("known capabilities not merged: %+v", g)
	}
	if _, ok := modelByID(ms, "grok-9"); !ok {
		t.Error("a model only the API knows is missing")
	}
}

func TestModelsOpenAICompatible(t *testing.T) {
	u := newUpstream(t, jsonAnswer(200, `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","owned_by":"vllm","max_model_len":32768}]}`))
	ms, err := u.client(t, DialectOpenAI, "").Models(context.Background())
	if err != nil || len(ms) != 1 || ms[0].ID != "Qwen/Qwen3-8B" || ms[0].ContextLength != 32768 {
		t.Fatalf("models = %+v, err %v", ms, err)
	}
	if got := u.last(t).Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization sent without a key: %q", got)
	}
}

func TestModelsSecondListFails(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			w.WriteHeader(500)
			return
		}
		jsonAnswer(200, `{"data":[{"id":"gpt-oss-120b"}]}`)(w, r)
	})
	ms, err := u.client(t, DialectCerebras, "k").Models(context.Background())
	if err != nil || len(ms) != 1 || ms[0].Source != "api" {
		t.Fatalf("models = %+v, err %v", ms, err)
	}
}

func TestModelsFallback(t *testing.T) {
	known := KnownModels(DialectCerebras)
	tests := []struct {
		name      string
		key       string
		handler   http.HandlerFunc
		wantErr   ErrorKind // "" for none
		wantCalls int
	}{
		{"no key: not asked", "", jsonAnswer(200, `{"data":[{"id":"x"}]}`), "", 0},
		{"bad key", "wrong", jsonAnswer(401, `{"message":"Wrong API Key","type":"invalid_request_error","param":"api_key","code":"wrong_api_key"}`), ErrBadKey, 1},
		{"server down", "k", jsonAnswer(503, `{"message":"down"}`), ErrServer, 1},
		{"not JSON", "k", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }, ErrBadResponse, 1},
		{"empty list", "k", jsonAnswer(200, `{"data":[]}`), "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tt.handler)
			ms, err := u.client(t, DialectCerebras, tt.key).Models(context.Background())
			if u.count() != tt.wantCalls {
				t.Errorf("%d requests, want %d", u.count(), tt.wantCalls)
			}
			if len(ms) != len(known) {
				t.Fatalf("got %d models, want the %d known ones", len(ms), len(known))
			}
			for _, m := range ms {
				if m.Source != "fallback" {
					t.Errorf("%s: Source = %q, want fallback", m.ID, m.Source)
				}
			}
			switch {
			case tt.name == "empty list":
				if err == nil {
					t.Error("no error for an empty list")
				}
			case tt.wantErr == "":
				if err != nil {
					t.Errorf("err = %v", err)
				}
			default:
				var e *Error
				if !errors.As(err, &e) || e.Kind != tt.wantErr {
					t.Errorf("err = %v, want kind %s", err, tt.wantErr)
				}
			}
		})
	}
}
