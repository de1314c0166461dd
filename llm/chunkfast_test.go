package llm

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// fastCases are chunks chosen to trip a hand-written decoder: escapes,
// Unicode, nulls, key orders, unknown members, whitespace, duplicates and
// near misses of every kind. fast says whether the fast path must take
// the chunk (the common shapes must not silently fall back); nil means
// either way is fine, so long as the result is the full decoder's.
var fastCases = []struct {
	name string
	data string
	fast *bool
}{
	{"cerebras content", `{"id":"chatcmpl-1","choices":[{"delta":{"content":" tok1"},"index":0}],"created":1764441600,"model":"gpt-oss-120b","system_fingerprint":"fp_3a8c2e1f","object":"chat.completion.chunk"}`, yes},
	{"cerebras reasoning", `{"id":"chatcmpl-1","choices":[{"delta":{"reasoning":" Hmm"},"index":0}],"created":1764441600,"model":"gpt-oss-120b","system_fingerprint":"fp","object":"chat.completion.chunk"}`, yes},
	{"role only", `{"id":"c","choices":[{"delta":{"role":"assistant"},"index":0}],"created":1,"model":"m","object":"chat.completion.chunk"}`, yes},
	{"role and empty content", `{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`, yes},
	{"openai order with nulls", `{"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"gpt-4o","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}`, yes},
	{"xai reasoning_content", `{"id":"x","object":"chat.completion.chunk","created":1,"model":"grok","choices":[{"index":0,"delta":{"reasoning_content":"think","role":"assistant"}}],"system_fingerprint":"fp"}`, yes},
	{"refusal", `{"choices":[{"index":0,"delta":{"refusal":"no"}}]}`, yes},
	{"text completion", `{"id":"cmpl","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}]}`, yes},
	{"finish reason", `{"id":"c","choices":[{"delta":{},"finish_reason":"stop","index":0}],"model":"m"}`, yes},
	{"empty choices", `{"id":"c","choices":[],"model":"m"}`, yes},
	{"null choices", `{"id":"c","choices":null}`, yes},
	{"no choices", `{"id":"c"}`, yes},
	{"empty object", `{}`, yes},
	{"null delta", `{"choices":[{"index":0,"delta":null}]}`, yes},
	{"null strings", `{"id":null,"model":null,"object":null,"choices":[{"index":null,"delta":{"content":null,"role":null},"text":null,"finish_reason":null}]}`, yes},
	{"created null", `{"created":null,"choices":[{"index":0,"delta":{"content":"a"}}]}`, yes},
	{"several choices", `{"choices":[{"index":2,"delta":{"content":"c"}},{"index":0,"delta":{"reasoning":"r"}},{"index":1,"delta":{"content":"b"}}]}`, yes},
	{"whitespace", " {\n\t\"id\" : \"c\" ,\r\n \"choices\" : [ { \"index\" : 1 , \"delta\" : { \"content\" : \" x \" } } ] } \n", yes},
	{"escapes", `{"choices":[{"index":0,"delta":{"content":"a\"b\\c\/d\be\ff\ng\rh\ti"}}]}`, yes},
	{"unicode escapes", `{"choices":[{"index":0,"delta":{"content":"\u00e9\u4e2d\u0000\u001f\uFFFD\u2028"}}]}`, yes},
	{"surrogate pair", `{"choices":[{"index":0,"delta":{"content":"\ud83d\ude00 and \uD834\uDD1E"}}]}`, yes},
	{"raw utf8", `{"choices":[{"index":0,"delta":{"content":"héllo 中文 😀"}}]}`, yes},
	{"html and unicode separators", `{"choices":[{"index":0,"delta":{"content":"<b>&amp;</b>` + "\u2028\u2029" + `"}}]}`, yes},
	{"escaped id", `{"id":"a\u0062c","model":"m\n","choices":[{"index":0,"delta":{"content":"x"}}]}`, yes},
	{"unknown scalar members", `{"x_groq":1.5e-3,"foo":true,"bar":false,"baz":null,"qux":"s","choices":[{"index":0,"delta":{"content":"x","extra":-0.0},"other":[1,2]}]}`, yes},
	{"nested unknown object", `{"x":{"a":{"b":[{"c":"d"},[],{}]},"e":[true,null]},"choices":[{"index":0,"delta":{"content":"x"}}]}`, yes},
	{"unknown with escapes in value", `{"x":"\u00e9\n","choices":[{"index":0,"delta":{"content":"x"}}]}`, yes},
	{"obfuscation field", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}],"obfuscation":"aB3x"}`, yes},
	{"created zero", `{"created":0,"choices":[{"index":0,"delta":{"content":"x"}}]}`, yes},

	// What the fast path must leave to the full decoder.
	{"usage", `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`, no},
	{"time_info", `{"choices":[],"time_info":{"queue_time":0.1}}`, no},
	{"timings", `{"choices":[{"index":0,"delta":{"content":"x"}}],"timings":{"prompt_ms":1}}`, no},
	{"error object", `{"error":{"message":"boom","type":"server_error"},"status_code":500}`, no},
	{"error null", `{"error":null,"choices":[{"index":0,"delta":{"content":"x"}}]}`, no},
	{"tool calls", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"f","arguments":"{"}}]}}]}`, no},
	{"function call", `{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{}"}}}]}`, no},
	{"logprobs", `{"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":-0.1}]}}]}`, no},
	{"message", `{"choices":[{"index":0,"message":{"role":"assistant","content":"x"}}]}`, no},
	{"duplicate content", `{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`, no},
	{"duplicate choices", `{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":1,"delta":{"content":"b"}}]}`, no},
	{"duplicate index", `{"choices":[{"index":0,"index":1,"delta":{"content":"a"}}]}`, no},
	{"duplicate unknown", `{"x":1,"x":2,"choices":[{"index":0,"delta":{"content":"a"}}]}`, no},
	{"duplicate nested unknown", `{"x":{"a":1,"a":2},"choices":[{"index":0,"delta":{"content":"a"}}]}`, no},
	{"duplicate usage null", `{"usage":null,"usage":null,"choices":[{"index":0,"delta":{"content":"a"}}]}`, no},
	{"escaped name", `{"choices":[{"index":0,"delta":{"\u0063ontent":"a"}}]}`, no},
	{"case variant name", `{"Choices":[{"index":0,"delta":{"content":"a"}}]}`, nil},
	{"case variant delta name", `{"choices":[{"index":0,"delta":{"Content":"a"}}]}`, nil},
	{"case variant with type error", `{"created":"x","Choices":[{"index":0,"delta":{"content":"a"}}]}`, no},
	{"lone high surrogate", `{"choices":[{"index":0,"delta":{"content":"\ud83d"}}]}`, no},
	{"lone low surrogate", `{"choices":[{"index":0,"delta":{"content":"\ude00x"}}]}`, no},
	{"high then non-low", `{"choices":[{"index":0,"delta":{"content":"\ud83d\u0041"}}]}`, no},
	{"invalid utf8", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xffb\"}}]}", no},
	{"utf8 surrogate bytes", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xed\xa0\x80\"}}]}", no},
	{"raw control char", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\tb\"}}]}", no},
	{"bad escape", `{"choices":[{"index":0,"delta":{"content":"\x"}}]}`, no},
	{"short unicode escape", `{"choices":[{"index":0,"delta":{"content":"\u12"}}]}`, no},
	{"negative index", `{"choices":[{"index":-1,"delta":{"content":"a"}}]}`, no},
	{"huge index", `{"choices":[{"index":5000,"delta":{"content":"a"}}]}`, no},
	{"float index", `{"choices":[{"index":1.0,"delta":{"content":"a"}}]}`, no},
	{"exponent index", `{"choices":[{"index":1e0,"delta":{"content":"a"}}]}`, no},
	{"leading zero index", `{"choices":[{"index":01,"delta":{"content":"a"}}]}`, no},
	{"string index", `{"choices":[{"index":"0","delta":{"content":"a"}}]}`, no},
	{"number content", `{"choices":[{"index":0,"delta":{"content":5}}]}`, no},
	{"object content", `{"choices":[{"index":0,"delta":{"content":{"a":1}}}]}`, no},
	{"null choice", `{"choices":[null]}`, no},
	{"trailing garbage", `{"choices":[]} x`, no},
	{"two objects", `{"choices":[]}{}`, no},
	{"trailing comma", `{"choices":[{"index":0,"delta":{"content":"a"},}]}`, no},
	{"missing colon", `{"choices" [{"index":0}]}`, no},
	{"truncated", `{"choices":[{"index":0,"delta":{"content":"a`, no},
	{"bad unknown number", `{"x":01,"choices":[]}`, no},
	{"bad unknown literal", `{"x":nul,"choices":[]}`, no},
	{"unknown number then letter", `{"x":1x,"choices":[]}`, no},
	{"vertical tab whitespace", "{\"choices\":\v[]}", no},
	{"deep unknown", `{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `,"choices":[]}`, no},
	{"huge created", `{"created":123456789012345678901234,"choices":[]}`, no},
	{"negative created", `{"created":-1,"choices":[{"index":0,"delta":{"content":"a"}}]}`, no},
	{"choices object", `{"choices":{"index":0}}`, no},
}

var (
	yes = new(true)
	no  = new(false)
)

// testStream is a Stream with what add needs, to compare the events of
// both paths.
func testStream(d Dialect) *Stream {
	return &Stream{dialect: dialectOf(d), endpoint: EndpointChat, cancel: func() {}, streamed: true}
}

// compareFastFull decodes data both ways, starting from a fast decoder f
// that may already have decoded other chunks (its buffers are reused),
// and reports whether the fast path took it. When it did, json v2 alone
// must take the chunk too, and both Chunks and the events they make must
// be the same.
func compareFastFull(t *testing.T, f *fastChunk, data []byte) bool {
	t.Helper()
	var fast Chunk
	if !f.decode(data, &fast) {
		return false
	}
	var v2 Chunk
	if err := jsonv2.Unmarshal(data, &v2); err != nil {
		t.Fatalf("fast path took a chunk json v2 rejects (%v): %q", err, data)
	}
	var full Chunk
	if _, err := decodeChunk(data, &full); err != nil {
		t.Fatalf("fast path took a chunk the full path rejects (%s): %q", describe(err), data)
	}
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("chunk %q\nfast %#v\nfull %#v", data, fast, full)
	}
	for _, d := range []Dialect{DialectCerebras, DialectOpenAI} {
		a, b := testStream(d), testStream(d)
		a.add(&fast, 7)
		b.add(&full, 7)
		if !reflect.DeepEqual(a.queue, b.queue) || a.model != b.model || a.id != b.id || a.done != b.done {
			t.Fatalf("events of %q (%s)\nfast %+v model %q id %q\nfull %+v model %q id %q", data, d, a.queue, a.model, a.id, b.queue, b.model, b.id)
		}
	}
	return true
}

func TestChunkFastPathMatchesFull(t *testing.T) {
	var shared fastChunk // one decoder for all, as a Stream reuses it
	for _, tc := range fastCases {
		t.Run(tc.name, func(t *testing.T) {
			var f fastChunk
			took := compareFastFull(t, &f, []byte(tc.data))
			if tc.fast != nil && took != *tc.fast {
				t.Errorf("fast path took it: %v, want %v", took, *tc.fast)
			}
			// Again on the shared decoder, twice: reused buffers and
			// interned strings must not leak from one chunk to the next.
			for range 2 {
				if compareFastFull(t, &shared, []byte(tc.data)) != took {
					t.Errorf("the shared decoder decided differently")
				}
			}
		})
	}
}

// TestChunkFastPathTakesCommonStreams checks that whole streams of the
// common shape go the fast way and give the same events as before.
func TestChunkFastPathTakesCommonStreams(t *testing.T) {
	var f fastChunk
	fast, all := 0, 0
	for _, ev := range bytes.Split(benchStream(50), []byte("\n\n")) {
		data, ok := bytes.CutPrefix(ev, []byte("data: "))
		if !ok || string(data) == "[DONE]" {
			continue
		}
		all++
		if compareFastFull(t, &f, data) {
			fast++
		}
	}
	// All but the last chunk, which has usage and time_info.
	if fast != all-1 {
		t.Errorf("fast path took %d of %d chunks, want %d", fast, all, all-1)
	}
}

// TestChunkFastPathThinkTags runs content with think tags through both
// paths on a dialect that splits them, chunk after chunk, and compares
// the events.
func TestChunkFastPathThinkTags(t *testing.T) {
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"<thi"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"nk>why \u003c/think"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":">answer"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	}
	a, b := testStream(DialectOpenAI), testStream(DialectOpenAI)
	for _, ch := range chunks {
		if !a.fast.decode([]byte(ch), &a.scratch) {
			t.Fatalf("fast path left %s", ch)
		}
		a.add(&a.scratch, 1)
		if _, err := decodeChunk([]byte(ch), &b.scratch); err != nil {
			t.Fatal(describe(err))
		}
		b.add(&b.scratch, 1)
	}
	if !reflect.DeepEqual(a.queue, b.queue) || len(a.queue) == 0 {
		t.Fatalf("fast %+v\nfull %+v", a.queue, b.queue)
	}
}

// FuzzChunkFastPath: for any input the fast path either declines or gives
// exactly what the full decoder gives.
func FuzzChunkFastPath(f *testing.F) {
	for _, tc := range fastCases {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fc fastChunk
		took := compareFastFull(t, &fc, data)
		// The same decoder after another chunk, and again.
		compareFastFull(t, &fc, []byte(fastCases[0].data))
		if compareFastFull(t, &fc, data) != took {
			t.Fatalf("a reused decoder decided differently on %q", data)
		}
	})
}

// TestChunkFastPathThroughStream streams tricky chunks through a real
// Stream (fast path on) and compares with the events of the full decoder.
func TestChunkFastPathThroughStream(t *testing.T) {
	var body strings.Builder
	var want []Event
	ref := testStream(DialectCerebras)
	for _, tc := range fastCases {
		// Newlines would end the SSE data line: whitespace is covered above.
		if tc.fast == nil || !*tc.fast || strings.ContainsAny(tc.data, "\r\n") {
			continue
		}
		body.WriteString(data(tc.data))
		var c Chunk
		if _, err := decodeChunk([]byte(strings.TrimSpace(tc.data)), &c); err != nil {
			t.Fatal(describe(err))
		}
		ref.add(&c, 0)
	}
	want = ref.queue
	body.WriteString(data("[DONE]"))
	c := NewClient(ProviderConfig{Dialect: DialectCerebras, BaseURL: "http://mem",
		HTTPClient: &http.Client{Transport: memTransport{body: []byte(body.String())}}})
	s := c.Stream(context.Background(), chatSpec())
	var got []Event
	for s.Next() {
		e := s.Event()
		e.At = 0
		got = append(got, e)
	}
	if err := s.Err(); err != nil {
		t.Fatal(describe(err))
	}
	for i := range want {
		want[i].At = 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %+v\nwant %+v", got, want)
	}
	if s.ResponseID() != "chatcmpl-1" || s.Model() != "gpt-oss-120b" {
		t.Errorf("id %q model %q: the first chunk's should be kept", s.ResponseID(), s.Model())
	}
}
