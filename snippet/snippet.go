// Package snippet renders a request as code a user can run elsewhere:
// curl, Python and JavaScript with the openai SDK, and Go with net/http.
// The key is always read from an environment variable, never written out.
package snippet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"knobs/ordered"
)

// Request is what a snippet sends.
type Request struct {
	BaseURL string // without /v1
	Path    string // "/v1/chat/completions" or "/v1/completions"
	KeyEnv  string // the environment variable holding the key; "" for none
	Body    []byte // the JSON body exactly as Knobs sends it
}

// Snippet is one rendering.
type Snippet struct {
	Lang  string `json:"lang"`
	Label string `json:"label"`
	Code  string `json:"code"`
}

// Render returns the request as curl, Python, JavaScript and Go.
func Render(r Request) []Snippet {
	pretty, indented := indentJSON(r.Body, "  ")
	return []Snippet{
		{"curl", "curl", curl(r, pretty)},
		{"python", "Python (openai SDK)", python(r, indented)},
		{"javascript", "JavaScript (openai SDK)", javascript(r, pretty)},
		{"go", "Go (net/http)", goCode(r, pretty)},
	}
}

// maxGrowth is how many times larger than the body its indented copy may
// be. Indenting writes a line per value, as many spaces deep as the value
// is: a long list of small values deep in a body grows a hundred times
// over, once per snippet, and a body a thousand levels deep grows into
// gigabytes.
const maxGrowth = 4

// indentJSON indents b with indent per level, and says whether it did: b
// comes back as it is when it is not JSON or when indenting would grow it
// past maxGrowth times its size.
func indentJSON(b []byte, indent string) (string, bool) {
	if indentedSize(b, len(indent)) > maxGrowth*len(b)+4096 {
		return string(b), false
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", indent) != nil {
		return string(b), false
	}
	return out.String(), true
}

// indentedSize is about the size of b indented by indent bytes a level,
// or more: each bracket and comma outside strings starts a line as deep
// as it is, and a closing bracket may start one more. It reads b once,
// without building anything.
func indentedSize(b []byte, indent int) int {
	n := len(b)
	ordered.Structure(b, func(c byte, depth int) {
		switch c {
		case '[', '{', ',':
			n += 2 * (1 + depth*indent)
		case ':':
			n++
		}
	})
	return n
}

// shellQuote wraps s in single quotes for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// streamed reports whether the body asks for a streamed answer; Knobs
// sends stream: true unless the user set it false.
func streamed(body []byte) bool {
	var b struct {
		Stream *bool `json:"stream"`
	}
	return json.Unmarshal(body, &b) != nil || b.Stream == nil || *b.Stream
}

func curl(r Request, pretty string) string {
	var b strings.Builder
	flag := "-N " // no buffering: the stream shows as it comes
	if !streamed(r.Body) {
		flag = ""
	}
	fmt.Fprintf(&b, "curl %s%s \\\n", flag, shellQuote(r.BaseURL+r.Path))
	b.WriteString("  -H 'Content-Type: application/json' \\\n")
	if r.KeyEnv != "" {
		fmt.Fprintf(&b, "  -H \"Authorization: Bearer $%s\" \\\n", r.KeyEnv)
	}
	fmt.Fprintf(&b, "  -d %s", shellQuote(pretty))
	return b.String()
}

// pyValue renders JSON as a Python literal.
func pyValue(v any, indent string) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return x.String()
	case string:
		q, _ := json.Marshal(x)
		return string(q)
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[\n")
		for _, e := range x {
			b.WriteString(indent + "    " + pyValue(e, indent+"    ") + ",\n")
		}
		b.WriteString(indent + "]")
		return b.String()
	case *ordered.Object:
		if len(x.Keys) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{\n")
		for _, key := range x.Keys {
			k, _ := json.Marshal(key)
			b.WriteString(indent + "    " + string(k) + ": " + pyValue(x.Vals[key], indent+"    ") + ",\n")
		}
		b.WriteString(indent + "}")
		return b.String()
	}
	return fmt.Sprint(v)
}

// python writes the body as keyword arguments when indented, the JSON
// that curl shows was indented; otherwise as one dictionary on one line,
// which a deep body cannot grow.
func python(r Request, indented bool) string {
	var fields *ordered.Object
	ok := false
	if indented {
		decoded, _ := ordered.Decode(r.Body)
		fields, ok = decoded.(*ordered.Object)
	}
	var b strings.Builder
	b.WriteString("import os\nfrom openai import OpenAI\n\n")
	key := `"none"`
	if r.KeyEnv != "" {
		key = fmt.Sprintf(`os.environ[%q]`, r.KeyEnv)
	}
	fmt.Fprintf(&b, "client = OpenAI(base_url=%q, api_key=%s)\n\n", r.BaseURL+"/v1", key)
	method, takes := "client.chat.completions.create", chatArgs
	if strings.HasSuffix(r.Path, "/v1/completions") {
		method, takes = "client.completions.create", completionArgs
	}
	stream := streamed(r.Body)
	result := "stream"
	if !stream {
		result = "response"
	}
	fmt.Fprintf(&b, "%s = %s(\n", result, method)
	if !ok {
		fmt.Fprintf(&b, "    **%s,\n", string(r.Body))
	}
	extra := ordered.NewObject()
	if ok {
		for _, k := range fields.Keys {
			if takes[k] {
				fmt.Fprintf(&b, "    %s=%s,\n", k, pyValue(fields.Vals[k], "    "))
			} else {
				extra.Set(k, fields.Vals[k])
			}
		}
	}
	if len(extra.Keys) > 0 {
		// Fields the SDK has no argument for travel in extra_body unchanged.
		fmt.Fprintf(&b, "    extra_body=%s,\n", pyValue(extra, "    "))
	}
	b.WriteString(")\n")
	switch {
	case !stream && method == "client.completions.create":
		b.WriteString("for choice in response.choices:\n    print(choice.text)\n")
	case !stream:
		b.WriteString("print(response.choices[0].message.content)\n")
	case method == "client.completions.create":
		b.WriteString("for chunk in stream:\n    if chunk.choices:\n        print(chunk.choices[0].text, end=\"\", flush=True)\n")
	default:
		b.WriteString("for chunk in stream:\n    if chunk.choices and chunk.choices[0].delta.content:\n        print(chunk.choices[0].delta.content, end=\"\", flush=True)\n")
	}
	return b.String()
}

// completionArgs and chatArgs are the body fields the openai Python
// SDK's completions.create and chat.completions.create take as keyword
// arguments; each method raises TypeError on any other, which therefore
// goes in extra_body. snippet's tests pin the SDK's lists these follow.
var (
	completionArgs = argSet("model", "prompt", "best_of", "echo", "frequency_penalty", "logit_bias", "logprobs",
		"max_tokens", "n", "presence_penalty", "seed", "stop", "stream", "stream_options", "suffix", "temperature", "top_p", "user")
	chatArgs = argSet("messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias",
		"logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
		"presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
		"service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs",
		"top_p", "user", "verbosity", "web_search_options")
)

func argSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func javascript(r Request, pretty string) string {
	var b strings.Builder
	b.WriteString("import OpenAI from \"openai\";\n\n")
	key := `"none"`
	if r.KeyEnv != "" {
		key = "process.env." + r.KeyEnv
	}
	fmt.Fprintf(&b, "const client = new OpenAI({ baseURL: %q, apiKey: %s });\n\n", r.BaseURL+"/v1", key)
	method := "client.chat.completions.create"
	if strings.HasSuffix(r.Path, "/v1/completions") {
		method = "client.completions.create"
	}
	// The SDK passes unknown fields through, so the body goes as it is.
	if !streamed(r.Body) {
		fmt.Fprintf(&b, "const response = await %s(%s);\n", method, pretty)
		if method == "client.completions.create" {
			b.WriteString("for (const choice of response.choices) console.log(choice.text);\n")
		} else {
			b.WriteString("console.log(response.choices[0].message.content);\n")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "const stream = await %s(%s);\n", method, pretty)
	if method == "client.completions.create" {
		b.WriteString("for await (const chunk of stream) {\n  process.stdout.write(chunk.choices[0]?.text ?? \"\");\n}\n")
	} else {
		b.WriteString("for await (const chunk of stream) {\n  process.stdout.write(chunk.choices[0]?.delta?.content ?? \"\");\n}\n")
	}
	return b.String()
}

func goCode(r Request, pretty string) string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"net/http\"\n\t\"os\"\n\t\"strings\"\n)\n\n")
	b.WriteString("const body = `" + strings.ReplaceAll(pretty, "`", "` + \"`\" + `") + "`\n\n")
	b.WriteString("func main() {\n")
	fmt.Fprintf(&b, "\treq, err := http.NewRequest(\"POST\", %q, strings.NewReader(body))\n", r.BaseURL+r.Path)
	b.WriteString("\tif err != nil {\n\t\tpanic(err)\n\t}\n")
	b.WriteString("\treq.Header.Set(\"Content-Type\", \"application/json\")\n")
	if r.KeyEnv != "" {
		fmt.Fprintf(&b, "\treq.Header.Set(\"Authorization\", \"Bearer \"+os.Getenv(%q))\n", r.KeyEnv)
	}
	b.WriteString("\tresp, err := http.DefaultClient.Do(req)\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\tdefer resp.Body.Close()\n")
	b.WriteString("\tsc := bufio.NewScanner(resp.Body)\n\tsc.Buffer(make([]byte, 1<<20), 1<<20)\n")
	b.WriteString("\tfor sc.Scan() {\n\t\tif line, ok := strings.CutPrefix(sc.Text(), \"data: \"); ok {\n\t\t\tfmt.Println(line)\n\t\t}\n\t}\n")
	b.WriteString("\tif err := sc.Err(); err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n}\n")
	return b.String()
}
