package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"knobs/field"
	"knobs/ordered"
)

// Validate checks a RunSpec against the capability registry before anything
// is sent upstream, for the dialect of its provider and its model m (the
// fallback lists fill in what m leaves out). It returns nil when the
// request may be sent.
//
// A JSON null is treated as "unset", as the seeds declare every optional
// field nullable: its value is not checked. The field is still sent as it
// is, so a null in a field the provider does not know or the model rejects
// is reported like any other value. The required fields (model, messages,
// prompt) may not be null.
func Validate(spec RunSpec, d Dialect, m Model) field.Errors {
	v := validator{d: d, e: spec.Endpoint, strict: strictDialect(d), errs: field.Errors{}}
	v.run(spec.Body, m)
	if v.errs.Empty() {
		return nil
	}
	return v.errs
}

type validator struct {
	d      Dialect
	e      Endpoint
	strict bool
	body   map[string]any
	params map[string]Param
	model  modelFacts
	errs   field.Errors
}

func (v *validator) run(raw json.RawMessage, m Model) {
	if !knownDialect(v.d) {
		v.errs.Add("provider", fmt.Sprintf("Knobs does not know the provider dialect %q", v.d))
		return
	}
	if !v.e.Valid() {
		v.errs.Add("endpoint", fmt.Sprintf("The endpoint must be chat or completion, not %q", v.e))
		return
	}
	if v.tooDeep(raw) {
		return
	}
	body, msg := decodeObject(raw)
	if msg != "" {
		v.errs.Add("body", msg)
		return
	}
	v.body = body
	v.params = paramIndex(Params(v.d, v.e))

	id, _ := body["model"].(string)
	v.model = factsOf(v.d, m, strings.TrimSpace(id))

	names := make([]string, 0, len(body))
	for name := range body {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v.field(name, body[name])
	}
	for _, p := range v.params {
		if _, ok := body[p.Name]; p.Required && !ok {
			v.errs.Add(p.Name, requiredMsg(p.Name))
		}
	}
	v.crossChecks()
}

// tooDeep reports the top-level fields of raw that nest deeper than
// ordered.MaxDepth (the body itself when it is not an object), and whether
// there was one. Nothing deeper is checked further: the schema compiler
// and every walker after it recurse into what they are given, and a
// schema nested thousands deep took the compiler minutes.
func (v *validator) tooDeep(raw []byte) bool {
	if ordered.Depth(raw) <= ordered.MaxDepth {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		v.errs.Add("body", "The request body is "+(&ordered.DepthError{}).Error())
		return true
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		// The body's own braces are the first level.
		if ordered.Depth(fields[name]) > ordered.MaxDepth-1 {
			v.errs.Add(name, name+" is "+(&ordered.DepthError{}).Error()+": Knobs does not send JSON this deep")
		}
	}
	if v.errs.Empty() { // brackets in text that is not JSON after all
		return false
	}
	return true
}

func requiredMsg(name string) string {
	switch name {
	case "model":
		return "Choose a model: model is required"
	case "messages":
		return "messages is required: add at least one message"
	}
	return name + " is required"
}

// decodeObject parses the body, keeping numbers exact, and says in words
// what is wrong when it is not one JSON object.
func decodeObject(raw []byte) (map[string]any, string) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, "The request body is empty: it must be a JSON object"
	}
	val, err := decodeExact(raw)
	if err != nil {
		return nil, "The request body is not valid JSON: " + err.Error()
	}
	obj, ok := val.(map[string]any)
	if !ok {
		return nil, "The request body must be a JSON object, not " + describeJSON(val)
	}
	return obj, ""
}

func decodeExact(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return val, nil
}

// field checks one top-level field of the body.
func (v *validator) field(name string, val any) {
	p, ok := v.params[name]
	if !ok {
		if ok, reason := unknownField(v.d, v.e, name); !ok {
			v.errs.Add(name, reason)
		}
		return
	}
	if ok, reason := paramSupport(v.d, v.e, v.model, p); !ok {
		v.errs.Add(name, reason)
		return
	}
	if val == nil {
		if p.Required {
			v.errs.Add(name, requiredMsg(name))
		}
		return
	}
	v.value(p, val)
}

// value checks the value of a supported parameter against its Param.
func (v *validator) value(p Param, val any) {
	name := p.Name
	switch p.Type {
	case TypeNumber, TypeInteger:
		x, ok := jsonNumber(val)
		if !ok {
			v.errs.Add(name, fmt.Sprintf("%s must be a number, not %s", name, describeJSON(val)))
			return
		}
		if p.Type == TypeInteger && x != math.Trunc(x) {
			v.errs.Add(name, fmt.Sprintf("%s must be a whole number, not %s", name, fmtNum(x)))
			return
		}
		if msg := outOfRange(name, p, x); msg != "" {
			v.errs.Add(name, msg)
			return
		}
		if x == 0 && p.Min != nil && *p.Min == -1 && v.e == EndpointChat && (name == "max_tokens" || name == "max_completion_tokens") {
			v.errs.Add(name, name+" must be at least 1, or -1 for the model's maximum, not 0")
		}
	case TypeBoolean:
		if _, ok := val.(bool); !ok {
			v.errs.Add(name, fmt.Sprintf("%s must be true or false, not %s", name, describeJSON(val)))
		}
	case TypeString:
		s, ok := val.(string)
		if !ok {
			v.errs.Add(name, fmt.Sprintf("%s must be a string, not %s", name, describeJSON(val)))
			return
		}
		if p.MaxLength > 0 && utf8.RuneCountInString(s) > p.MaxLength {
			v.errs.Add(name, fmt.Sprintf("%s must be at most %d characters long", name, p.MaxLength))
		}
		if name == "model" {
			v.checkModelID(s)
		}
	case TypeEnum:
		s, ok := val.(string)
		if !ok || !slices.Contains(p.Enum, s) {
			v.errs.Add(name, fmt.Sprintf("%s must be one of %s, not %s", name, orList(p.Enum), describeJSON(val)))
			return
		}
		if name == "reasoning_effort" && !v.model.effortAllowed(s) {
			v.errs.Add(name, fmt.Sprintf("%s takes reasoning_effort %s, not %q", v.model.id, orList(v.model.efforts), s))
		}
	case TypeStringOrArray, TypeStringArray:
		v.stop(p, val)
	case TypeObject:
		obj, ok := val.(map[string]any)
		if !ok {
			v.errs.Add(name, fmt.Sprintf("%s must be a JSON object, not %s", name, describeJSON(val)))
			return
		}
		switch name {
		case "logit_bias":
			v.logitBias(p, obj)
		case "response_format":
			v.responseFormat(obj)
		case "prediction":
			v.prediction(obj)
		case "stream_options":
			v.streamOptions(obj)
		}
	case TypeArray:
		if name == "tools" {
			v.tools(val)
		}
	case TypeEnumOrObject:
		if name == "tool_choice" {
			v.toolChoice(p, val)
		}
	case TypeMessages:
		v.messages(val)
	case TypePrompt:
		v.prompt(val)
	}
}

// checkModelID checks the model id once it is known to be a string.
func (v *validator) checkModelID(id string) {
	if strings.TrimSpace(id) == "" {
		v.errs.Add("model", requiredMsg("model"))
		return
	}
	if v.d == DialectXAI && v.e == EndpointCompletion && v.model.reasoningKnown && v.model.reasoning {
		v.errs.Add("model", id+" is a reasoning model, and xAI's legacy /v1/completions does not support reasoning models: use chat or a non-reasoning model")
	}
}

func (v *validator) stop(p Param, val any) {
	name := p.Name
	if s, ok := val.(string); ok {
		if p.Type == TypeStringArray {
			v.errs.Add(name, fmt.Sprintf("%s on %s takes an array of strings: write [%q]", name, dialectName(v.d), s))
		}
		return
	}
	arr, ok := val.([]any)
	if !ok {
		v.errs.Add(name, fmt.Sprintf("%s must be a string or an array of strings, not %s", name, describeJSON(val)))
		return
	}
	for i, it := range arr {
		if _, ok := it.(string); !ok {
			v.errs.Add(name, fmt.Sprintf("%s must hold strings only: item %d is %s", name, i, describeJSON(it)))
			return
		}
	}
	if p.MaxItems > 0 && len(arr) > p.MaxItems {
		v.errs.Add(name, fmt.Sprintf("%s takes at most %d sequences, not %d", name, p.MaxItems, len(arr)))
	}
}

func (v *validator) logitBias(p Param, obj map[string]any) {
	for _, k := range sortedFields(obj) {
		if _, err := strconv.ParseUint(k, 10, 32); err != nil {
			v.errs.Add(p.Name, fmt.Sprintf("logit_bias keys must be token ids (whole numbers), not %q", k))
			return
		}
		x, ok := jsonNumber(obj[k])
		if !ok {
			v.errs.Add(p.Name, fmt.Sprintf("logit_bias[%q] must be a number, not %s", k, describeJSON(obj[k])))
			return
		}
		if msg := outOfRange(fmt.Sprintf("logit_bias[%q]", k), p, x); msg != "" {
			v.errs.Add(p.Name, msg)
			return
		}
	}
}

func (v *validator) streamOptions(obj map[string]any) {
	if iu, ok := obj["include_usage"]; ok && iu != nil {
		if _, ok := iu.(bool); !ok {
			v.errs.Add("stream_options.include_usage", "include_usage must be true or false, not "+describeJSON(iu))
		}
	} else if v.d == DialectXAI {
		v.errs.Add("stream_options.include_usage", "xAI requires include_usage in stream_options")
	}
	v.extraKeys("stream_options", obj, "include_usage")
}

func (v *validator) prediction(obj map[string]any) {
	if t, _ := obj["type"].(string); t != "content" {
		v.errs.Add("prediction.type", `prediction.type must be "content"`)
	}
	if c, ok := obj["content"]; !ok || c == nil {
		v.errs.Add("prediction.content", "prediction.content is required: the predicted text")
	} else {
		v.textContent("prediction.content", c)
	}
	v.extraKeys("prediction", obj, "type", "content")
}

// crossChecks are the rules that tie fields together. They run only on
// fields whose own value passed, so one mistake gives one message.
func (v *validator) crossChecks() {
	if v.fine("top_logprobs") && v.e == EndpointChat {
		if lp, _ := v.body["logprobs"].(bool); !lp {
			v.errs.Add("top_logprobs", "top_logprobs needs logprobs set to true")
		}
	}
	streamed := true
	if s, ok := v.body["stream"].(bool); ok && !s {
		streamed = false
	}
	if v.fine("stream_options") && !streamed {
		v.errs.Add("stream_options", "stream_options applies to a streamed answer only, and stream is false: remove it")
	}
	if best, ok := v.whole("best_of"); ok && best > 1 && streamed {
		// The seeds: "Results cannot be streamed".
		v.errs.Add("best_of", "best_of above 1 cannot be streamed: set stream to false for one JSON answer, or set best_of to 1")
	} else if ok {
		n, ok := v.whole("n")
		if !ok {
			n = 1
		}
		if best < n {
			v.errs.Add("best_of", fmt.Sprintf("best_of (%d) must be at least n (%d): best_of is the number of candidates, of which the best n are returned", best, n))
		}
	}
	for _, pair := range [][2]string{{"min_tokens", "max_tokens"}, {"min_completion_tokens", "max_completion_tokens"}} {
		lo, ok1 := v.whole(pair[0])
		hi, ok2 := v.whole(pair[1])
		if ok1 && ok2 && lo > 0 && hi > 0 && lo > hi {
			v.errs.Add(pair[0], fmt.Sprintf("%s (%d) is larger than %s (%d)", pair[0], lo, pair[1], hi))
		}
	}
	for _, name := range []string{"max_completion_tokens", "max_tokens"} {
		n, ok := v.whole(name)
		switch {
		case !ok:
		case v.model.maxOutput > 0 && n > int64(v.model.maxOutput) && v.d != DialectSim:
			// The simulator clamps to its maximum instead of refusing.
			v.errs.Add(name, fmt.Sprintf("%s writes at most %d tokens: %s must be at most that", v.model.id, v.model.maxOutput, name))
		case v.model.contextLength > 0 && n > int64(v.model.contextLength):
			v.errs.Add(name, fmt.Sprintf("%s is larger than the context of %s (%d tokens)", name, v.model.id, v.model.contextLength))
		}
	}
	v.toolsConsistency()
}

// fine reports whether the field is set, not null, and drew no error, at
// its own key or below it.
func (v *validator) fine(name string) bool {
	val, ok := v.body[name]
	if !ok || val == nil {
		return false
	}
	for k := range v.errs {
		if k == name || strings.HasPrefix(k, name+".") {
			return false
		}
	}
	return true
}

// whole returns a field's whole-number value when it is fine.
func (v *validator) whole(name string) (int64, bool) {
	if !v.fine(name) {
		return 0, false
	}
	x, ok := jsonNumber(v.body[name])
	if !ok || x != math.Trunc(x) {
		return 0, false
	}
	// Clamp what int64 cannot hold, so that a huge value still compares
	// as huge.
	return int64(max(min(x, math.MaxInt64/2), math.MinInt64/2)), true
}

// extraKeys reports the keys of an object nested in the body that a strict
// dialect does not know; for the others they pass through.
func (v *validator) extraKeys(at string, obj map[string]any, allowed ...string) {
	if !v.strict {
		return
	}
	for _, k := range sortedFields(obj) {
		if !slices.Contains(allowed, k) {
			if _, done := v.errs[at+"."+k]; !done {
				v.errs.Add(at+"."+k, fmt.Sprintf("%s does not know the field %s here and would answer 422: remove it", dialectName(v.d), k))
			}
		}
	}
}

func jsonNumber(val any) (float64, bool) {
	n, ok := val.(json.Number)
	if !ok {
		return 0, false
	}
	x, err := n.Float64()
	return x, err == nil
}

func isJSONString(x any) bool { _, ok := x.(string); return ok }

func isTokenID(x any) bool {
	f, ok := jsonNumber(x)
	return ok && f >= 0 && f == math.Trunc(f)
}

func allItems(arr []any, pred func(any) bool) bool {
	for _, x := range arr {
		if !pred(x) {
			return false
		}
	}
	return true
}

func outOfRange(name string, p Param, x float64) string {
	low := p.Min != nil && x < *p.Min
	high := p.Max != nil && x > *p.Max
	if !low && !high {
		return ""
	}
	switch {
	case p.Min != nil && p.Max != nil:
		return fmt.Sprintf("%s must be between %s and %s, not %s", name, fmtNum(*p.Min), fmtNum(*p.Max), fmtNum(x))
	case p.Min != nil:
		return fmt.Sprintf("%s must be at least %s, not %s", name, fmtNum(*p.Min), fmtNum(x))
	default:
		return fmt.Sprintf("%s must be at most %s, not %s", name, fmtNum(*p.Max), fmtNum(x))
	}
}

// fmtNum writes x as the user would: whole numbers (an int32 bound)
// without an exponent.
func fmtNum(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// describeJSON names a JSON value for a message, quoting short strings so that
// the user sees what they typed.
func describeJSON(val any) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean (" + strconv.FormatBool(x) + ")"
	case json.Number:
		return "a number (" + x.String() + ")"
	case string:
		if utf8.RuneCountInString(x) <= 40 {
			return strconv.Quote(x)
		}
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", val)
}

// orList writes "a, b or c".
func orList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

func sortedFields(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
