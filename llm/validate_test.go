package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"knobs/field"
)

// chatBody is a minimal valid chat body for model with the extra fields
// (written as `,"field":value...`) appended.
func chatBody(model, extra string) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}]%s}`, model, extra)
}

// chatMsgsBody is a chat body with the given messages array.
func chatMsgsBody(model, messages string) string {
	return fmt.Sprintf(`{"model":%q,"messages":%s}`, model, messages)
}

// complBody is a minimal valid completion body with extra fields.
func complBody(model, extra string) string {
	return fmt.Sprintf(`{"model":%q,"prompt":"Once upon a time"%s}`, model, extra)
}

const weatherToolJSON = `{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}}`

type validateCase struct {
	name string
	d    Dialect
	e    Endpoint
	m    Model // usually zero: the body's model is looked up in the fallback lists
	body string
	key  string // the field key that must carry an error; "" means no error at all
	msg  string // a part of that key's message
}

func runValidate(t *testing.T, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(RunSpec{Provider: string(tt.d), Endpoint: tt.e, Body: json.RawMessage(tt.body)}, tt.d, tt.m)
			if tt.key == "" {
				if errs != nil {
					t.Fatalf("want no errors, got %v", errs)
				}
				return
			}
			got, ok := errs[tt.key]
			if !ok {
				t.Fatalf("want an error at %q, got %v", tt.key, errs)
			}
			if !strings.Contains(got, tt.msg) {
				t.Fatalf("error at %q = %q, want it to contain %q", tt.key, got, tt.msg)
			}
		})
	}
}

const (
	dCer   = DialectCerebras
	dXAI   = DialectXAI
	dOAI   = DialectOpenAI
	dSim   = DialectSim
	eChat  = EndpointChat
	eCompl = EndpointCompletion
)

func TestValidateBody(t *testing.T) {
	runValidate(t, []validateCase{
		{"empty", dCer, eChat, Model{}, ``, "body", "empty"},
		{"blank", dCer, eChat, Model{}, "  \n", "body", "empty"},
		{"array", dCer, eChat, Model{}, `[1]`, "body", "must be a JSON object, not an array"},
		{"string", dCer, eChat, Model{}, `"hi"`, "body", "must be a JSON object"},
		{"null", dCer, eChat, Model{}, `null`, "body", "must be a JSON object, not null"},
		{"broken", dCer, eChat, Model{}, `{"model":`, "body", "not valid JSON"},
		{"two values", dCer, eChat, Model{}, `{} {}`, "body", "not valid JSON"},
		{"bad endpoint", dCer, "embeddings", Model{}, chatBody("gpt-oss-120b", ""), "endpoint", "chat or completion"},
		{"bad dialect", "anthropic", eChat, Model{}, chatBody("x", ""), "provider", "anthropic"},
		{"minimal chat", dCer, eChat, Model{}, chatBody("gpt-oss-120b", ""), "", ""},
		{"minimal completion", dCer, eCompl, Model{}, complBody("gpt-oss-120b", ""), "", ""},
	})
}

func TestValidateModel(t *testing.T) {
	runValidate(t, []validateCase{
		{"missing", dCer, eChat, Model{}, `{"messages":[{"role":"user","content":"hi"}]}`, "model", "model is required"},
		{"null", dCer, eChat, Model{}, `{"model":null,"messages":[{"role":"user","content":"hi"}]}`, "model", "model is required"},
		{"empty", dCer, eChat, Model{}, chatBody("", ""), "model", "model is required"},
		{"blank", dCer, eChat, Model{}, chatBody("  ", ""), "model", "model is required"},
		{"number", dCer, eChat, Model{}, `{"model":5,"messages":[{"role":"user","content":"hi"}]}`, "model", "model must be a string, not a number (5)"},
		{"missing openai", dOAI, eCompl, Model{}, `{"prompt":"x"}`, "model", "model is required"},
		{"xai reasoning model on legacy completions", dXAI, eCompl, Model{}, complBody("grok-4", ""), "model", "xAI's legacy /v1/completions does not support reasoning models"},
		{"xai reasoning model known to the caller", dXAI, eCompl, Model{ID: "grok-9", Reasoning: true}, complBody("grok-9", ""), "model", "reasoning model"},
		{"xai non-reasoning model on legacy completions", dXAI, eCompl, Model{}, complBody("grok-3", ""), "", ""},
		{"xai unknown model on legacy completions", dXAI, eCompl, Model{}, complBody("grok-9", ""), "", ""},
	})
}

func TestValidateEndpointMismatch(t *testing.T) {
	for _, d := range []Dialect{dCer, dXAI, dOAI, dSim} {
		runValidate(t, []validateCase{
			{string(d) + " messages on completion", d, eCompl, Model{}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "messages", "messages is for chat"},
			{string(d) + " no prompt on completion", d, eCompl, Model{}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "prompt", "prompt is required"},
			{string(d) + " prompt on chat", d, eChat, Model{}, `{"model":"m","prompt":"hi"}`, "prompt", "chat takes messages"},
			{string(d) + " no messages on chat", d, eChat, Model{}, `{"model":"m","prompt":"hi"}`, "messages", "messages is required"},
		})
	}
	runValidate(t, []validateCase{
		{"cerebras completion field on chat", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"echo":true`), "echo", "echo is a text completion parameter"},
		{"cerebras chat field on completion", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"tools":[]`), "tools", "tools is a chat parameter"},
		{"sim chat field on completion", dSim, eCompl, Model{}, complBody("sim-fast", `,"response_format":{"type":"text"}`), "response_format", "chat parameter"},
		// vLLM takes echo on chat: an OpenAI-compatible server decides.
		{"openai completion field on chat", dOAI, eChat, Model{}, chatBody("m", `,"echo":true`), "", ""},
	})
}

func TestValidateTypes(t *testing.T) {
	runValidate(t, []validateCase{
		{"temperature string", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"temperature":"hot"`), "temperature", `temperature must be a number, not "hot"`},
		{"temperature bool", dOAI, eChat, Model{}, chatBody("m", `,"temperature":true`), "temperature", "must be a number"},
		{"top_p array", dXAI, eChat, Model{}, chatBody("grok-3", `,"top_p":[1]`), "top_p", "must be a number, not an array"},
		{"n fraction", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"n":1.5`), "n", "n must be a whole number"},
		{"n integral float", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"n":2.0`), "", ""},
		{"seed string", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"seed":"42"`), "seed", "must be a number"},
		{"seed big", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"seed":12345678901234`), "", ""},
		{"chat logprobs number", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logprobs":5`), "logprobs", "logprobs must be true or false"},
		{"cerebras completion logprobs bool", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"logprobs":true`), "logprobs", "logprobs must be a number"},
		{"cerebras completion logprobs int", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"logprobs":5`), "", ""},
		{"xai completion logprobs int", dXAI, eCompl, Model{}, complBody("grok-3", `,"logprobs":5`), "logprobs", "logprobs must be true or false"},
		{"xai completion logprobs bool", dXAI, eCompl, Model{}, complBody("grok-3", `,"logprobs":true`), "", ""},
		{"echo string", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"echo":"yes"`), "echo", "true or false"},
		{"user number", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"user":7`), "user", "user must be a string"},
		{"grammar_root number", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"grammar_root":1`), "grammar_root", "must be a string"},
		{"reasoning_format unknown", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"reasoning_format":"thoughts"`), "reasoning_format", "reasoning_format must be one of none, parsed, text_parsed, raw or hidden"},
		{"reasoning_format ok", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"reasoning_format":"parsed"`), "", ""},
		{"service_tier unknown", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"service_tier":"scale"`), "service_tier", "auto, default, flex or priority"},
		{"service_tier openai scale", dOAI, eChat, Model{}, chatBody("m", `,"service_tier":"scale"`), "", ""},
		{"response_format string", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"response_format":"json"`), "response_format", "must be a JSON object"},
		{"logit_bias array", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logit_bias":[1]`), "logit_bias", "must be a JSON object"},
		{"model_parameters array", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"model_parameters":[1]`), "model_parameters", "must be a JSON object"},
		{"model_parameters object", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"model_parameters":{"anything":1}`), "", ""},
		{"stream string", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stream":"yes"`), "stream", "stream must be true or false"},
		{"stream true", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stream":true`), "", ""},
		{"prompt_cache_key too long", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"prompt_cache_key":"`+strings.Repeat("k", 1025)+`"`), "prompt_cache_key", "at most 1024 characters"},
		{"prompt_cache_key 1024", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"prompt_cache_key":"`+strings.Repeat("é", 1024)+`"`), "", ""},
	})
}

func TestValidateNull(t *testing.T) {
	runValidate(t, []validateCase{
		{"null is unset", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"temperature":null,"stop":null,"logit_bias":null,"tools":null,"tool_choice":null`), "", ""},
		{"null completion", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"best_of":null,"logprobs":null,"stream_options":null`), "", ""},
		{"null messages", dCer, eChat, Model{}, `{"model":"gpt-oss-120b","messages":null}`, "messages", "messages is required"},
		{"null prompt", dCer, eCompl, Model{}, `{"model":"gpt-oss-120b","prompt":null}`, "prompt", "prompt is required"},
		// A null is still sent: where the field itself is refused, so is the null.
		{"null on a refused field", dXAI, eChat, Model{}, chatBody("grok-4", `,"presence_penalty":null`), "presence_penalty", "xAI reasoning models"},
		{"null on an unknown field", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"store":null`), "store", "422"},
		{"null on an unsupported field", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"suffix":null`), "suffix", "Cerebras does not support suffix"},
	})
}

func TestValidateRanges(t *testing.T) {
	runValidate(t, []validateCase{
		{"temperature high", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"temperature":2.5`), "temperature", "temperature must be between 0 and 2, not 2.5"},
		{"temperature low", dXAI, eCompl, Model{}, complBody("grok-3", `,"temperature":-0.1`), "temperature", "between 0 and 2"},
		{"temperature bounds", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"temperature":2,"top_p":0`), "", ""},
		{"top_p", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"top_p":1.5`), "top_p", "top_p must be between 0 and 1"},
		{"frequency_penalty", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"frequency_penalty":-3`), "frequency_penalty", "between -2 and 2"},
		{"presence_penalty", dOAI, eChat, Model{}, chatBody("m", `,"presence_penalty":2.1`), "presence_penalty", "between -2 and 2"},
		{"logit_bias value", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logit_bias":{"50256":150}`), "logit_bias", `logit_bias["50256"] must be between -100 and 100, not 150`},
		{"logit_bias key", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logit_bias":{"hello":1}`), "logit_bias", `token ids (whole numbers), not "hello"`},
		{"logit_bias negative key", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"logit_bias":{"-1":1}`), "logit_bias", "token ids"},
		{"logit_bias value type", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logit_bias":{"1":"x"}`), "logit_bias", "must be a number"},
		{"logit_bias ok", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logit_bias":{"1":-100,"2":100,"3":0.5}`), "", ""},
		{"n zero", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"n":0`), "n", "n must be at least 1, not 0"},
		{"n zero dXAI", dXAI, eCompl, Model{}, complBody("grok-3", `,"n":0`), "n", "n must be between 1 and 2147483647, not 0"},
		{"top_logprobs 21", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logprobs":true,"top_logprobs":21`), "top_logprobs", "between 0 and 20"},
		{"top_logprobs 20", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"logprobs":true,"top_logprobs":20`), "", ""},
		{"top_logprobs 9 dXAI", dXAI, eChat, Model{}, chatBody("grok-3", `,"logprobs":true,"top_logprobs":9`), "top_logprobs", "between 0 and 8"},
		{"top_logprobs 8 dXAI", dXAI, eChat, Model{}, chatBody("grok-3", `,"logprobs":true,"top_logprobs":8`), "", ""},
		{"completion logprobs 21", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"logprobs":21`), "logprobs", "between 0 and 20"},
		{"max_completion_tokens 0", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"max_completion_tokens":0`), "max_completion_tokens", "must be at least 1, or -1 for the model's maximum, not 0"},
		{"max_completion_tokens -1", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"max_completion_tokens":-1`), "", ""},
		{"max_tokens -1 sim", dSim, eChat, Model{}, chatBody("sim-fast", `,"max_tokens":-1`), "", ""},
		{"max_tokens -2 sim", dSim, eChat, Model{}, chatBody("sim-fast", `,"max_tokens":-2`), "max_tokens", "at least -1"},
		{"max_tokens -1 openai", dOAI, eChat, Model{}, chatBody("m", `,"max_tokens":-1`), "max_tokens", "at least 1"},
		{"far beyond the context", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"max_completion_tokens":1e300`), "max_completion_tokens", "larger than the context"},
		{"beyond the max output on the simulator", dSim, eChat, Model{ID: "sim-slow", MaxOutput: 4096}, chatBody("sim-slow", `,"max_tokens":5000`), "", ""},
		{"max_tokens 0 chat", dXAI, eChat, Model{}, chatBody("grok-3", `,"max_tokens":0`), "max_tokens", "at least 1"},
		{"completion max_tokens -1 per the seed", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"max_tokens":-1`), "", ""},
		{"completion max_tokens -2", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"max_tokens":-2`), "max_tokens", "at least -1"},
		{"xai completion max_tokens 0", dXAI, eCompl, Model{}, complBody("grok-3", `,"max_tokens":0`), "max_tokens", "between 1 and 2147483647"},
		{"min_tokens -1", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"min_tokens":-1,"min_completion_tokens":-1`), "", ""},
		{"min_tokens -2", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"min_completion_tokens":-2`), "min_completion_tokens", "at least -1"},
		{"min above max", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"min_tokens":100,"max_tokens":10`), "min_tokens", "min_tokens (100) is larger than max_tokens (10)"},
		{"min_completion above max", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"min_completion_tokens":100,"max_completion_tokens":10`), "min_completion_tokens", "larger than max_completion_tokens"},
		{"beyond the context", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"max_completion_tokens":200000`), "max_completion_tokens", "context of gpt-oss-120b (131072 tokens)"},
		{"beyond the max output", dOAI, eChat, Model{ID: "m", MaxOutput: 4096}, chatBody("m", `,"max_tokens":5000`), "max_tokens", "m writes at most 4096 tokens"},
		{"best_of 21", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"best_of":21`), "best_of", "between 0 and 20"},
	})
}

func TestValidateStop(t *testing.T) {
	runValidate(t, []validateCase{
		{"string", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stop":"\n"`), "", ""},
		{"four", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"stop":["a","b","c","d"]`), "", ""},
		{"five", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stop":["a","b","c","d","e"]`), "stop", "stop takes at most 4 sequences, not 5"},
		{"five openai", dOAI, eChat, Model{}, chatBody("m", `,"stop":["a","b","c","d","e"]`), "stop", "at most 4"},
		{"five dXAI", dXAI, eCompl, Model{}, complBody("grok-3", `,"stop":["a","b","c","d","e"]`), "stop", "at most 4"},
		{"not strings", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stop":["a",1]`), "stop", "item 1 is a number"},
		{"number", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stop":5`), "stop", "a string or an array of strings"},
		{"xai completion string", dXAI, eCompl, Model{}, complBody("grok-3", `,"stop":"END"`), "stop", `takes an array of strings: write ["END"]`},
		{"xai completion array", dXAI, eCompl, Model{}, complBody("grok-3", `,"stop":["END"]`), "", ""},
		{"xai chat string", dXAI, eChat, Model{}, chatBody("grok-3", `,"stop":"END"`), "", ""},
	})
}

func TestValidateCrossFields(t *testing.T) {
	runValidate(t, []validateCase{
		{"top_logprobs alone", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"top_logprobs":5`), "top_logprobs", "top_logprobs needs logprobs set to true"},
		{"top_logprobs logprobs false", dXAI, eChat, Model{}, chatBody("grok-3", `,"logprobs":false,"top_logprobs":5`), "top_logprobs", "needs logprobs set to true"},
		{"top_logprobs ok", dOAI, eChat, Model{}, chatBody("m", `,"logprobs":true,"top_logprobs":5`), "", ""},
		{"best_of below n", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"best_of":1,"n":2`), "best_of", "best_of (1) must be at least n (2)"},
		{"best_of below default n", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"best_of":0`), "best_of", "at least n (1)"},
		{"best_of 1", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"best_of":1,"n":1`), "", ""},
		{"best_of openai", dOAI, eCompl, Model{}, complBody("m", `,"best_of":1,"n":3`), "best_of", "at least n"},
		// "Results cannot be streamed" (the seeds), and every run streams.
		{"best_of equal n", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"best_of":2,"n":2`), "best_of", "best_of above 1 cannot be streamed"},
		{"best_of above n", dSim, eCompl, Model{}, complBody("sim-fast", `,"best_of":3,"n":2`), "best_of", "cannot be streamed"},
	})
}

func TestValidateMessages(t *testing.T) {
	toolLoop := `[
		{"role":"system","content":"Be brief."},
		{"role":"developer","content":[{"type":"text","text":"Use tools."}]},
		{"role":"user","content":[{"type":"text","text":"Weather?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}],"name":"ann"},
		{"role":"assistant","content":null,"reasoning":"Need a tool.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny"},
		{"role":"assistant","content":[{"type":"text","text":"Sunny."}]}
	]`
	runValidate(t, []validateCase{
		{"tool loop", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", toolLoop), "", ""},
		{"tool loop dSim", dSim, eChat, Model{}, chatMsgsBody("sim-fast", toolLoop), "", ""},
		{"not an array", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `"hi"`), "messages", `messages must be an array of messages, not "hi"`},
		{"empty", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[]`), "messages", "add at least one message"},
		{"not an object", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[5]`), "messages.0", "must be an object"},
		{"no role", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"content":"hi"}]`), "messages.0.role", "role is required"},
		{"bad role", dXAI, eChat, Model{}, chatMsgsBody("grok-3", `[{"role":"bot","content":"hi"}]`), "messages.0.role", `role must be system, developer, user, assistant or tool, not "bot"`},
		{"bad role openai", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"user","content":"a"},{"role":"function","content":"hi"}]`), "messages.1.role", "role must be"},
		{"no content", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user"}]`), "messages.0.content", "content is required"},
		{"system no content", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"system","content":null}]`), "messages.0.content", "content is required"},
		{"content number", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":5}]`), "messages.0.content", "string or an array of content parts"},
		{"part not object", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":["hi"]}]`), "messages.0.content.0", "must be an object"},
		{"part without text", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":[{"type":"text"}]}]`), "messages.0.content.0.text", "needs text"},
		{"part without type", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"user","content":[{"text":"a"}]}]`), "messages.0.content.0.type", "needs a type"},
		{"image in system", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"system","content":[{"type":"image_url","image_url":{"url":"u"}}]},{"role":"user","content":"hi"}]`), "messages.0.content.0.type", "must be text"},
		{"image without url", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]`), "messages.0.content.0.image_url", "url"},
		{"audio part openai", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]`), "", ""},
		{"audio part cerebras", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":[{"type":"input_audio"}]}]`), "messages.0.content.0.type", "text or image_url"},
		{"tool without id", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":"hi"},{"role":"tool","content":"sunny"}]`), "messages.1.tool_call_id", "needs the tool_call_id"},
		{"tool without id dXAI", dXAI, eChat, Model{}, chatMsgsBody("grok-3", `[{"role":"user","content":"hi"},{"role":"tool","content":"sunny","tool_call_id":""}]`), "messages.1.tool_call_id", "tool_call_id"},
		{"tool without content", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"tool","tool_call_id":"c"}]`), "messages.0.content", "the tool's result"},
		{"empty assistant", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":"hi"},{"role":"assistant"}]`), "messages.1.content", "needs content or tool_calls"},
		{"tool call arguments object", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]}]`), "messages.0.tool_calls.0.function.arguments", "must be a string holding JSON, not an object"},
		{"tool call without id", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]`), "messages.0.tool_calls.0.id", "needs its id"},
		{"tool call without function", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"assistant","tool_calls":[{"id":"c","type":"function"}]}]`), "messages.0.tool_calls.0.function", "needs a function"},
		{"tool calls not array", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"assistant","tool_calls":{}}]`), "messages.0.tool_calls", "must be an array"},
		{"name number", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":"a","name":1}]`), "messages.0.name", "must be a string"},
		{"reasoning_content cerebras", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":"a"},{"role":"assistant","content":"b","reasoning_content":"r"}]`), "messages.1.reasoning_content", "past reasoning goes back in the assistant message's reasoning field"},
		{"reasoning_content dXAI", dXAI, eChat, Model{}, chatMsgsBody("grok-3-mini", `[{"role":"user","content":"a"},{"role":"assistant","content":"b","reasoning_content":"r"}]`), "", ""},
		{"reasoning not text", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"assistant","content":"b","reasoning":5}]`), "messages.0.reasoning", "string or an array"},
		{"unknown message field cerebras", dCer, eChat, Model{}, chatMsgsBody("gpt-oss-120b", `[{"role":"user","content":"a","cache_control":{}}]`), "messages.0.cache_control", "would answer 422"},
		{"tool_call_id on user cerebras", dSim, eChat, Model{}, chatMsgsBody("sim-fast", `[{"role":"user","content":"a","tool_call_id":"x"}]`), "messages.0.tool_call_id", "would answer 422"},
		{"unknown message field openai", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"user","content":"a","cache_control":{}}]`), "", ""},
	})
}

func TestValidatePrompt(t *testing.T) {
	p := func(model, prompt string) string {
		return fmt.Sprintf(`{"model":%q,"prompt":%s}`, model, prompt)
	}
	runValidate(t, []validateCase{
		{"strings", dCer, eCompl, Model{}, p("gpt-oss-120b", `["a","b"]`), "", ""},
		{"tokens", dCer, eCompl, Model{}, p("gpt-oss-120b", `[1,2,3]`), "", ""},
		{"token arrays", dSim, eCompl, Model{}, p("sim-fast", `[[1,2],[3]]`), "", ""},
		{"token arrays openai", dOAI, eCompl, Model{}, p("m", `[[1,2],[3]]`), "", ""},
		{"negative token", dCer, eCompl, Model{}, p("gpt-oss-120b", `[1,-2]`), "prompt", "token ids"},
		{"mixed", dCer, eCompl, Model{}, p("gpt-oss-120b", `["a",1]`), "prompt", "prompt must be a string, an array of strings"},
		{"empty array", dCer, eCompl, Model{}, p("gpt-oss-120b", `[]`), "prompt", "prompt is empty"},
		{"number", dCer, eCompl, Model{}, p("gpt-oss-120b", `5`), "prompt", "not a number (5)"},
		{"object", dOAI, eCompl, Model{}, p("m", `{}`), "prompt", "not an object"},
		{"xai strings", dXAI, eCompl, Model{}, p("grok-3", `["a","b"]`), "", ""},
		{"xai tokens", dXAI, eCompl, Model{}, p("grok-3", `[1,2]`), "prompt", "xAI takes the prompt as a string or an array of strings"},
	})
}

func TestValidateResponseFormat(t *testing.T) {
	rf := func(v string) string { return chatBody("gpt-oss-120b", `,"response_format":`+v) }
	runValidate(t, []validateCase{
		{"text", dCer, eChat, Model{}, rf(`{"type":"text"}`), "", ""},
		{"json_object", dCer, eChat, Model{}, rf(`{"type":"json_object"}`), "", ""},
		{"json_schema", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"answer","strict":true,"description":"d","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}}}`), "", ""},
		{"json_schema null schema", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"answer","schema":null}}`), "", ""},
		{"json_schema draft-07", dXAI, eChat, Model{}, chatBody("grok-3", `,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"x":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/x"}}}}}`), "", ""},
		{"no type", dCer, eChat, Model{}, rf(`{}`), "response_format.type", "response_format.type is required"},
		{"bad type", dOAI, eChat, Model{}, chatBody("m", `,"response_format":{"type":"xml"}`), "response_format.type", `text, json_object or json_schema, not "xml"`},
		{"no json_schema", dCer, eChat, Model{}, rf(`{"type":"json_schema"}`), "response_format.json_schema", "needs a json_schema object"},
		{"no name", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"schema":{"type":"object"}}}`), "response_format.json_schema.name", "json_schema.name is required"},
		{"bad name", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"my answer","schema":{"type":"object"}}}`), "response_format.json_schema.name", "letters, digits, underscores or dashes"},
		{"bad strict", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","strict":"yes"}}`), "response_format.json_schema.strict", "true or false"},
		{"schema not an object", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":"object"}}`), "response_format.json_schema.schema", `must be a JSON Schema object, not "object"`},
		{"schema bad type", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"type":"strin"}}}}}`), "response_format.json_schema.schema", "at '/properties/a/type': value must be one of"},
		{"schema bad required", dOAI, eChat, Model{}, chatBody("m", `,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","required":"a"}}}`), "response_format.json_schema.schema", "at '/required': got string, want array"},
		{"schema bad regex", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"string","pattern":"[a-"}}}`), "response_format.json_schema.schema", "not valid regex"},
		{"schema ECMA-262 lookahead", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"string","pattern":"^(?=.*[A-Z])(?!.*\\s).+$"}}}`), "", ""},
		{"schema dangling ref", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{"$ref":"#/$defs/missing"}}}`), "response_format.json_schema.schema", `json-pointer in "#/$defs/missing" not found`},
		{"schema ref to a file", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{"$ref":"file:///etc/passwd"}}}`), "response_format.json_schema.schema", "Knobs does not load"},
		{"schema ref to a url", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{"$ref":"https://example.com/s.json"}}}`), "response_format.json_schema.schema", "Knobs does not load"},
		{"extra key cerebras", dCer, eChat, Model{}, rf(`{"type":"json_object","schema":{}}`), "response_format.schema", "would answer 422"},
		{"extra json_schema key cerebras", dCer, eChat, Model{}, rf(`{"type":"json_schema","json_schema":{"name":"a","schema":{},"format":"x"}}`), "response_format.json_schema.format", "would answer 422"},
		{"extra key openai", dOAI, eChat, Model{}, chatBody("m", `,"response_format":{"type":"json_object","extra":1}`), "", ""},
	})
}

func TestValidateTools(t *testing.T) {
	tools := func(model, v string) string { return chatBody(model, `,"tools":`+v) }
	runValidate(t, []validateCase{
		{"one tool", dCer, eChat, Model{}, tools("gpt-oss-120b", `[`+weatherToolJSON+`]`), "", ""},
		{"no parameters", dXAI, eChat, Model{}, tools("grok-3", `[{"type":"function","function":{"name":"now"}}]`), "", ""},
		{"not an array", dCer, eChat, Model{}, tools("gpt-oss-120b", `{}`), "tools", "tools must be an array of tools"},
		{"empty", dCer, eChat, Model{}, tools("gpt-oss-120b", `[]`), "tools", "tools is empty"},
		{"not an object", dCer, eChat, Model{}, tools("gpt-oss-120b", `["get_weather"]`), "tools.0", "must be an object"},
		{"bad type", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"retrieval","function":{"name":"f"}}]`), "tools.0.type", `type must be "function"`},
		{"no function", dOAI, eChat, Model{}, tools("m", `[{"type":"function"}]`), "tools.0.function", "function is required"},
		{"no name", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"description":"d"}}]`), "tools.0.function.name", "needs a name"},
		{"bad name", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"get weather"}}]`), "tools.0.function.name", `"get weather" must be 1 to 64 letters, digits, underscores or dashes`},
		{"long name", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"`+strings.Repeat("a", 65)+`"}}]`), "tools.0.function.name", "1 to 64"},
		{"duplicate name", dCer, eChat, Model{}, tools("gpt-oss-120b", `[`+weatherToolJSON+`,`+weatherToolJSON+`]`), "tools.1.function.name", `tool 0 is already named "get_weather"`},
		{"bad description", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"f","description":5}}]`), "tools.0.function.description", "must be a string"},
		{"bad strict", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"f","strict":1}}]`), "tools.0.function.strict", "true or false"},
		{"parameters not an object", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"f","parameters":"object"}}]`), "tools.0.function.parameters", "must be a JSON Schema object"},
		{"parameters bad schema", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"f","parameters":{"type":"objekt"}}}]`), "tools.0.function.parameters", "not a valid JSON Schema: at '/type'"},
		{"parameters bad schema second tool", dOAI, eChat, Model{}, tools("m", `[`+weatherToolJSON+`,{"type":"function","function":{"name":"g","parameters":{"properties":{"x":{"minimum":"one"}}}}}]`), "tools.1.function.parameters", "/properties/x/minimum"},
		{"extra function key cerebras", dCer, eChat, Model{}, tools("gpt-oss-120b", `[{"type":"function","function":{"name":"f","returns":{}}}]`), "tools.0.function.returns", "would answer 422"},
		{"extra function key openai", dOAI, eChat, Model{}, tools("m", `[{"type":"function","function":{"name":"f","returns":{}}}]`), "", ""},
	})
}

func TestValidateToolChoice(t *testing.T) {
	withTools := func(rest string) string { return chatBody("gpt-oss-120b", `,"tools":[`+weatherToolJSON+`]`+rest) }
	runValidate(t, []validateCase{
		{"auto", dCer, eChat, Model{}, withTools(`,"tool_choice":"auto"`), "", ""},
		{"required", dCer, eChat, Model{}, withTools(`,"tool_choice":"required","parallel_tool_calls":false`), "", ""},
		{"named", dCer, eChat, Model{}, withTools(`,"tool_choice":{"type":"function","function":{"name":"get_weather"}}`), "", ""},
		{"unknown string", dCer, eChat, Model{}, withTools(`,"tool_choice":"sometimes"`), "tool_choice", `tool_choice must be none, auto or required or an object naming a function, not "sometimes"`},
		{"number", dCer, eChat, Model{}, withTools(`,"tool_choice":1`), "tool_choice", "not a number (1)"},
		{"named missing tool", dCer, eChat, Model{}, withTools(`,"tool_choice":{"type":"function","function":{"name":"get_time"}}`), "tool_choice.function.name", `no tool is named "get_time"`},
		{"named without name", dOAI, eChat, Model{}, chatBody("m", `,"tools":[`+weatherToolJSON+`],"tool_choice":{"type":"function"}`), "tool_choice.function.name", "is required"},
		{"named bad type", dCer, eChat, Model{}, withTools(`,"tool_choice":{"type":"tool","function":{"name":"get_weather"}}`), "tool_choice.type", `must be "function"`},
		{"without tools", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"tool_choice":"auto"`), "tool_choice", "tool_choice needs tools"},
		{"named without tools", dXAI, eChat, Model{}, chatBody("grok-3", `,"tool_choice":{"type":"function","function":{"name":"f"}}`), "tool_choice", "needs tools"},
		{"parallel without tools", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"parallel_tool_calls":true`), "parallel_tool_calls", "only applies when tools are given"},
		{"parallel not bool", dCer, eChat, Model{}, withTools(`,"parallel_tool_calls":"yes"`), "parallel_tool_calls", "true or false"},
	})
}

func TestValidateOtherObjects(t *testing.T) {
	runValidate(t, []validateCase{
		{"prediction", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"prediction":{"type":"content","content":"x"}`), "", ""},
		{"prediction parts", dOAI, eChat, Model{}, chatBody("m", `,"prediction":{"type":"content","content":[{"type":"text","text":"x"}]}`), "", ""},
		{"prediction type", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"prediction":{"type":"x","content":"x"}`), "prediction.type", `must be "content"`},
		{"prediction content", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"prediction":{"type":"content"}`), "prediction.content", "required"},
		{"stream_options", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"stream_options":{"include_usage":true}`), "", ""},
		{"stream_options empty", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stream_options":{}`), "", ""},
		{"stream_options bad", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stream_options":{"include_usage":"yes"}`), "stream_options.include_usage", "true or false"},
		{"stream_options dXAI requires include_usage", dXAI, eCompl, Model{}, complBody("grok-3", `,"stream_options":{}`), "stream_options.include_usage", "xAI requires include_usage"},
		{"stream_options extra cerebras", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`), "stream_options.continuous_usage_stats", "422"},
		{"stream_options extra openai", dOAI, eChat, Model{}, chatBody("m", `,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`), "", ""},
	})
}

func TestValidateUnsupported(t *testing.T) {
	runValidate(t, []validateCase{
		// Unknown fields: strict dialects refuse them, the others pass them on.
		{"cerebras unknown", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"store":true`), "store", "Cerebras does not know the field store and would answer 422"},
		{"cerebras reasoning_content field", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"reasoning_content":"x"`), "reasoning_content", "422"},
		{"sim unknown", dSim, eCompl, Model{}, complBody("sim-fast", `,"top_k":40`), "top_k", "The simulator does not know the field top_k"},
		{"openai unknown", dOAI, eChat, Model{}, chatBody("m", `,"store":true,"top_k":40,"chat_template_kwargs":{"enable_thinking":false}`), "", ""},
		{"openai cerebras extensions", dOAI, eCompl, Model{}, complBody("m", `,"min_tokens":3,"grammar_root":"root","return_raw_tokens":true,"suffix":"x","echo":true`), "", ""},
		{"xai unknown", dXAI, eChat, Model{}, chatBody("grok-3", `,"search_parameters":{"mode":"off"}`), "", ""},

		// Known fields a dialect does not take.
		{"cerebras suffix", dCer, eCompl, Model{}, complBody("gpt-oss-120b", `,"suffix":"end"`), "suffix", "Cerebras does not support suffix"},
		{"sim suffix", dSim, eCompl, Model{}, complBody("sim-fast", `,"suffix":"end"`), "suffix", "does not support suffix"},
		{"xai best_of", dXAI, eCompl, Model{}, complBody("grok-3", `,"best_of":2`), "best_of", "xAI does not support best_of on /v1/completions"},
		{"xai frequency_penalty", dXAI, eCompl, Model{}, complBody("grok-3", `,"frequency_penalty":0.5`), "frequency_penalty", "xAI does not support frequency_penalty"},
		{"xai logit_bias", dXAI, eCompl, Model{}, complBody("grok-3", `,"logit_bias":{"1":1}`), "logit_bias", "xAI does not support logit_bias"},
		{"xai suffix", dXAI, eCompl, Model{}, complBody("grok-3", `,"suffix":"x"`), "suffix", "xAI does not support suffix"},
		{"xai completion grammar_root", dXAI, eCompl, Model{}, complBody("grok-3", `,"grammar_root":"root"`), "grammar_root", "xAI's /v1/completions has no grammar_root"},
		{"xai chat min_tokens", dXAI, eChat, Model{}, chatBody("grok-3", `,"min_tokens":5`), "min_tokens", "xAI's chat API has no min_tokens"},
		{"xai chat reasoning_format", dXAI, eChat, Model{}, chatBody("grok-3-mini", `,"reasoning_format":"parsed"`), "reasoning_format", "has no reasoning_format"},
		{"xai chat logit_bias", dXAI, eChat, Model{}, chatBody("grok-3", `,"logit_bias":{"1":1}`), "", ""},

		// xAI reasoning models.
		{"grok-4 presence_penalty", dXAI, eChat, Model{}, chatBody("grok-4", `,"presence_penalty":0.5`), "presence_penalty", "xAI reasoning models (grok-4 is one) reject presence_penalty"},
		{"grok-4 frequency_penalty default", dXAI, eChat, Model{}, chatBody("grok-4-fast-reasoning", `,"frequency_penalty":0`), "frequency_penalty", "even at its default"},
		{"grok-code stop", dXAI, eChat, Model{}, chatBody("grok-code-fast-1", `,"stop":["x"]`), "stop", "reject stop"},
		{"grok-3-mini stop", dXAI, eChat, Model{}, chatBody("grok-3-mini", `,"stop":"x"`), "stop", "reject stop"},
		{"grok-4-1 non-reasoning penalties", dXAI, eChat, Model{}, chatBody("grok-4-1-fast-non-reasoning", `,"presence_penalty":0.5,"frequency_penalty":0.5,"stop":["x"]`), "", ""},
		{"grok-3 completion presence_penalty", dXAI, eCompl, Model{}, complBody("grok-3", `,"presence_penalty":0.5`), "presence_penalty", "grok-3 does not support presence_penalty"},
		{"grok-3 chat presence_penalty", dXAI, eChat, Model{}, chatBody("grok-3", `,"presence_penalty":0.5`), "", ""},
		// Reasoning penalties are fine elsewhere.
		{"cerebras reasoning penalties", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"presence_penalty":0.5,"frequency_penalty":0.5,"stop":["x"]`), "", ""},
	})
}

func TestValidateReasoning(t *testing.T) {
	re := func(model, effort string) string { return chatBody(model, `,"reasoning_effort":`+effort) }
	runValidate(t, []validateCase{
		{"gpt-oss medium", dCer, eChat, Model{}, re("gpt-oss-120b", `"medium"`), "", ""},
		{"gpt-oss none", dCer, eChat, Model{}, re("gpt-oss-120b", `"none"`), "reasoning_effort", `gpt-oss-120b takes reasoning_effort low, medium or high, not "none"`},
		{"gpt-oss bogus", dCer, eChat, Model{}, re("gpt-oss-120b", `"max"`), "reasoning_effort", "reasoning_effort must be one of none, low, medium or high"},
		{"gpt-oss number", dCer, eChat, Model{}, re("gpt-oss-120b", `3`), "reasoning_effort", "not a number (3)"},
		{"llama", dCer, eChat, Model{}, re("llama3.1-8b", `"low"`), "reasoning_effort", "llama3.1-8b is not a reasoning model"},
		{"llama disable_reasoning", dCer, eChat, Model{}, chatBody("llama3.1-8b", `,"disable_reasoning":true`), "disable_reasoning", "not a reasoning model"},
		{"llama clear_thinking", dCer, eChat, Model{}, chatBody("llama3.1-8b", `,"clear_thinking":true`), "clear_thinking", "not a reasoning model"},
		{"gpt-oss disable_reasoning", dCer, eChat, Model{}, chatBody("gpt-oss-120b", `,"disable_reasoning":false,"clear_thinking":true`), "", ""},
		{"unknown cerebras model", dCer, eChat, Model{}, re("zai-glm-5", `"none"`), "", ""},
		{"caller knows efforts", dCer, eChat, Model{ID: "zai-glm-5", Reasoning: true, ReasoningEfforts: []string{"none", "high"}}, re("zai-glm-5", `"low"`), "reasoning_effort", "zai-glm-5 takes reasoning_effort none or high"},
		{"grok-3-mini high", dXAI, eChat, Model{}, re("grok-3-mini", `"high"`), "", ""},
		{"grok-3-mini medium", dXAI, eChat, Model{}, re("grok-3-mini", `"medium"`), "reasoning_effort", "grok-3-mini takes reasoning_effort low or high"},
		{"grok-3-mini alias", dXAI, eChat, Model{}, re("grok-3-mini-latest", `"medium"`), "reasoning_effort", "low or high"},
		{"grok-4", dXAI, eChat, Model{}, re("grok-4", `"low"`), "reasoning_effort", "grok-4 sets its own reasoning effort and rejects reasoning_effort"},
		{"grok-3", dXAI, eChat, Model{}, re("grok-3", `"low"`), "reasoning_effort", "not a reasoning model"},
		{"sim-reasoning", dSim, eChat, Model{}, re("sim-reasoning", `"low"`), "", ""},
		{"sim-fast", dSim, eChat, Model{}, re("sim-fast", `"low"`), "reasoning_effort", "sim-fast is not a reasoning model"},
		{"openai xhigh", dOAI, eChat, Model{}, re("gpt-5", `"xhigh"`), "", ""},
		{"openai bogus", dOAI, eChat, Model{}, re("gpt-5", `"extreme"`), "reasoning_effort", "must be one of"},
		{"openai model says", dOAI, eChat, Model{ID: "o9", Reasoning: true, ReasoningEfforts: []string{"low"}}, re("o9", `"high"`), "reasoning_effort", "o9 takes reasoning_effort low"},
		// A Model for another id says nothing of the body's model.
		{"model mismatch", dCer, eChat, Model{ID: "llama3.1-8b"}, re("gpt-oss-120b", `"high"`), "", ""},
	})
}

// TestValidateFullRequests sends everything a dialect takes, so that no
// rule refuses a valid request.
func TestValidateFullRequests(t *testing.T) {
	chatAll := `,"temperature":0.7,"top_p":0.9,"seed":42,"n":2,"max_completion_tokens":1000,"max_tokens":1000,` +
		`"stop":["\n\n"],"frequency_penalty":0.1,"presence_penalty":-0.1,"logit_bias":{"100":-5},` +
		`"logprobs":true,"top_logprobs":3,"response_format":{"type":"json_object"},` +
		`"tools":[` + weatherToolJSON + `],"tool_choice":"auto","parallel_tool_calls":true,"user":"u1","stream_options":{"include_usage":true}`
	cerebrasChatExtra := `,"min_tokens":1,"min_completion_tokens":1,"reasoning_effort":"low","reasoning_format":"parsed",` +
		`"disable_reasoning":false,"clear_thinking":false,"prediction":{"type":"content","content":"x"},` +
		`"service_tier":"auto","prompt_cache_key":"conv-1","model_parameters":{}`
	complAll := `,"temperature":0.7,"top_p":0.9,"seed":42,"n":2,"max_tokens":100,"stop":["\n"],` +
		`"presence_penalty":0.1,"echo":true,"user":"u1","stream_options":{"include_usage":true},"stream":true`
	cerebrasComplExtra := `,"frequency_penalty":0.1,"logit_bias":{"1":1},"logprobs":5,"min_tokens":1,` +
		`"grammar_root":"root","return_raw_tokens":false,"reasoning_format":"hidden","prompt_cache_key":"k"`
	runValidate(t, []validateCase{
		{"cerebras chat", dCer, eChat, Model{}, chatBody("gpt-oss-120b", chatAll+cerebrasChatExtra), "", ""},
		{"sim chat", dSim, eChat, Model{}, chatBody("sim-reasoning", chatAll+cerebrasChatExtra), "", ""},
		{"openai chat", dOAI, eChat, Model{}, chatBody("gpt-5", chatAll+cerebrasChatExtra), "", ""},
		{"xai chat", dXAI, eChat, Model{}, chatBody("grok-4-1-fast-non-reasoning", chatAll), "", ""},
		{"xai chat grok-3-mini", dXAI, eChat, Model{}, chatBody("grok-3-mini", `,"reasoning_effort":"low","temperature":0.2,"logprobs":true,"top_logprobs":8`), "", ""},
		{"cerebras completion", dCer, eCompl, Model{}, complBody("gpt-oss-120b", complAll+cerebrasComplExtra), "", ""},
		{"sim completion", dSim, eCompl, Model{}, complBody("sim-fast", complAll+cerebrasComplExtra), "", ""},
		{"openai completion", dOAI, eCompl, Model{}, complBody("m", complAll+cerebrasComplExtra+`,"suffix":"x"`), "", ""},
		{"xai completion", dXAI, eCompl, Model{}, complBody("grok-4-1-fast-non-reasoning", complAll+`,"logprobs":true`), "", ""},
	})
}

func TestValidateFieldErrors(t *testing.T) {
	fe := Validate(RunSpec{Endpoint: eChat, Body: json.RawMessage(chatBody("gpt-oss-120b", `,"temperature":5,"n":0`))}, dCer, Model{})
	if len(fe) != 2 || fe.Empty() {
		t.Fatalf("Validate = %v, want errors at temperature and n", fe)
	}
	want := "invalid input: n: n must be at least 1, not 0; temperature: temperature must be between 0 and 2, not 5"
	if fe.Error() != want {
		t.Errorf("Error() = %q\nwant %q", fe.Error(), want)
	}
	var target field.Errors
	if err := fe.Err(); !errors.As(err, &target) || len(target) != 2 {
		t.Errorf("Err() = %v, want the field.Errors", err)
	}

	ok := Validate(RunSpec{Endpoint: eChat, Body: json.RawMessage(chatBody("gpt-oss-120b", ""))}, dCer, Model{})
	if ok != nil || !ok.Empty() || ok.Err() != nil {
		t.Errorf("valid request: Validate = %#v, Err() = %v; want nil", ok, ok.Err())
	}
}

func TestValidateNestingDepth(t *testing.T) {
	nest := func(n int, leaf string) string {
		return strings.Repeat(`{"a":`, n) + leaf + strings.Repeat("}", n)
	}
	schema := func(n int) string {
		return chatBody("gpt-oss-120b", `,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":`+
			strings.Repeat(`{"type":"array","items":`, n)+`{"type":"string"}`+strings.Repeat("}", n)+`}}`)
	}
	tool := func(n int) string {
		return chatBody("gpt-oss-120b", `,"tools":[{"type":"function","function":{"name":"f","parameters":`+
			strings.Repeat(`{"type":"array","items":`, n)+`{"type":"string"}`+strings.Repeat("}", n)+`}}]`)
	}
	runValidate(t, []validateCase{
		{"schema 50 deep", dCer, eChat, Model{}, schema(50), "", ""},
		{"schema 61 deep", dCer, eChat, Model{}, schema(61), "response_format", "nested deeper than 64 levels"},
		{"schema 9000 deep", dCer, eChat, Model{}, schema(9000), "response_format", "nested deeper than 64 levels"},
		{"tool parameters", dCer, eChat, Model{}, tool(9000), "tools", "nested deeper than 64 levels"},
		{"extra body field", dOAI, eChat, Model{}, chatBody("m", `,"extra":`+nest(200, "1")), "extra", "nested deeper than 64 levels"},
		{"messages", dOAI, eChat, Model{}, chatMsgsBody("m", `[{"role":"user","content":"x","meta":`+nest(100, "1")+`}]`), "messages", "nested deeper than 64 levels"},
		{"array body", dOAI, eChat, Model{}, strings.Repeat("[", 5000) + strings.Repeat("]", 5000), "body", "nested deeper than 64 levels"},
		{"past encoding/json's own limit", dOAI, eChat, Model{}, chatBody("m", `,"extra":`+nest(20000, "1")), "body", "nested deeper than 64 levels"},
	})
}
