package llm

import (
	"fmt"
	"slices"
	"strconv"
)

// The checks of a chat request's messages and a completion's prompt.

var messageRoles = []string{"system", "developer", "user", "assistant", "tool"}

func (v *validator) messages(val any) {
	arr, ok := val.([]any)
	if !ok {
		v.errs.Add("messages", "messages must be an array of messages, not "+describeJSON(val))
		return
	}
	if len(arr) == 0 {
		v.errs.Add("messages", "messages is empty: add at least one message")
		return
	}
	for i, it := range arr {
		v.message("messages."+strconv.Itoa(i), it)
	}
}

func (v *validator) message(at string, val any) {
	msg, ok := val.(map[string]any)
	if !ok {
		v.errs.Add(at, "each message must be an object with a role and content, not "+describeJSON(val))
		return
	}
	role, ok := msg["role"].(string)
	if !ok {
		v.errs.Add(at+".role", "role is required: "+orList(messageRoles))
		return
	}
	if !slices.Contains(messageRoles, role) {
		v.errs.Add(at+".role", fmt.Sprintf("role must be %s, not %q", orList(messageRoles), role))
		return
	}
	allowed := []string{"role", "content", "name"}
	switch role {
	case "assistant":
		allowed = append(allowed, "reasoning", "tool_calls")
	case "tool":
		allowed = append(allowed, "tool_call_id")
	}
	if v.strict {
		if _, ok := msg["reasoning_content"]; ok && role == "assistant" {
			v.errs.Add(at+".reasoning_content", dialectName(v.d)+" rejects reasoning_content in a request: past reasoning goes back in the assistant message's reasoning field")
		}
	}
	v.extraKeys(at, msg, allowed...)
	if n, ok := msg["name"]; ok && n != nil {
		if _, ok := n.(string); !ok {
			v.errs.Add(at+".name", "name must be a string")
		}
	}

	content, hasContent := msg["content"]
	hasContent = hasContent && content != nil
	switch role {
	case "assistant":
		calls, hasCalls := msg["tool_calls"]
		hasCalls = hasCalls && calls != nil
		if !hasContent && !hasCalls {
			v.errs.Add(at+".content", "an assistant message needs content or tool_calls")
		}
		if hasContent {
			v.textContent(at+".content", content)
		}
		if hasCalls {
			v.toolCalls(at+".tool_calls", calls)
		}
		if r, ok := msg["reasoning"]; ok && r != nil && v.strict {
			v.textContent(at+".reasoning", r)
		}
	case "tool":
		if id, ok := msg["tool_call_id"].(string); !ok || id == "" {
			v.errs.Add(at+".tool_call_id", "a tool message needs the tool_call_id of the call it answers")
		}
		if !hasContent {
			v.errs.Add(at+".content", "content is required: the tool's result")
		} else {
			v.textContent(at+".content", content)
		}
	case "user":
		if !hasContent {
			v.errs.Add(at+".content", "content is required")
		} else {
			v.userContent(at+".content", content)
		}
	default:
		if !hasContent {
			v.errs.Add(at+".content", "content is required")
		} else {
			v.textContent(at+".content", content)
		}
	}
}

// textContent checks content that is a string or an array of text parts.
func (v *validator) textContent(at string, val any) {
	v.content(at, val, false)
}

// userContent is textContent that may also hold images.
func (v *validator) userContent(at string, val any) {
	v.content(at, val, true)
}

func (v *validator) content(at string, val any, images bool) {
	if _, ok := val.(string); ok {
		return
	}
	parts, ok := val.([]any)
	if !ok {
		v.errs.Add(at, "content must be a string or an array of content parts, not "+describeJSON(val))
		return
	}
	for i, it := range parts {
		pat := at + "." + strconv.Itoa(i)
		part, ok := it.(map[string]any)
		if !ok {
			v.errs.Add(pat, `each content part must be an object like {"type":"text","text":"..."}, not `+describeJSON(it))
			continue
		}
		t, _ := part["type"].(string)
		switch {
		case t == "text":
			if _, ok := part["text"].(string); !ok {
				v.errs.Add(pat+".text", "a text part needs text, a string")
			}
			v.extraKeys(pat, part, "type", "text")
		case t == "image_url" && images:
			img, _ := part["image_url"].(map[string]any)
			if _, ok := img["url"].(string); !ok {
				v.errs.Add(pat+".image_url", `an image part needs "image_url": {"url": "..."}`)
			}
			v.extraKeys(pat, part, "type", "image_url")
		case t == "":
			v.errs.Add(pat+".type", "each content part needs a type")
		case v.strict:
			if images {
				v.errs.Add(pat+".type", fmt.Sprintf("content part type must be text or image_url, not %q", t))
			} else {
				v.errs.Add(pat+".type", fmt.Sprintf("content part type must be text, not %q", t))
			}
		}
	}
}

func (v *validator) toolCalls(at string, val any) {
	calls, ok := val.([]any)
	if !ok {
		v.errs.Add(at, "tool_calls must be an array, not "+describeJSON(val))
		return
	}
	for i, it := range calls {
		cat := at + "." + strconv.Itoa(i)
		call, ok := it.(map[string]any)
		if !ok {
			v.errs.Add(cat, "each tool call must be an object, not "+describeJSON(it))
			continue
		}
		v.extraKeys(cat, call, "id", "type", "function", "index")
		if id, ok := call["id"].(string); !ok || id == "" {
			v.errs.Add(cat+".id", "a tool call needs its id")
		}
		if t, _ := call["type"].(string); t != "function" {
			v.errs.Add(cat+".type", `type must be "function"`)
		}
		fn, ok := call["function"].(map[string]any)
		if !ok {
			v.errs.Add(cat+".function", "a tool call needs a function with a name and arguments")
			continue
		}
		v.extraKeys(cat+".function", fn, "name", "arguments")
		if _, ok := fn["name"].(string); !ok {
			v.errs.Add(cat+".function.name", "the function's name is required")
		}
		switch a := fn["arguments"].(type) {
		case string:
		case nil:
			v.errs.Add(cat+".function.arguments", "arguments is required: the call's arguments as a JSON string")
		default:
			v.errs.Add(cat+".function.arguments", "arguments must be a string holding JSON, not "+describeJSON(a))
		}
	}
}

func (v *validator) prompt(val any) {
	const at = "prompt"
	if _, ok := val.(string); ok {
		return
	}
	what := "prompt must be a string, an array of strings, an array of token ids or an array of token-id arrays"
	if v.d == DialectXAI {
		what = "xAI takes the prompt as a string or an array of strings"
	}
	arr, ok := val.([]any)
	if !ok {
		v.errs.Add(at, what+", not "+describeJSON(val))
		return
	}
	if len(arr) == 0 {
		v.errs.Add(at, "prompt is empty")
		return
	}
	if allItems(arr, isJSONString) {
		return
	}
	if v.d != DialectXAI {
		if allItems(arr, isTokenID) {
			return
		}
		if allItems(arr, func(x any) bool { a, ok := x.([]any); return ok && len(a) > 0 && allItems(a, isTokenID) }) {
			return
		}
	}
	v.errs.Add(at, what)
}
