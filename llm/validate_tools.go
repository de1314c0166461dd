package llm

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// The checks of tools, tool_choice and their consistency with the
// conversation.

// nameRE is what OpenAI allows in a schema's or a function's name; the
// other providers follow it.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (v *validator) tools(val any) {
	arr, ok := val.([]any)
	if !ok {
		v.errs.Add("tools", "tools must be an array of tools, not "+describeJSON(val))
		return
	}
	if len(arr) == 0 {
		v.errs.Add("tools", "tools is empty: add a tool or remove the field")
		return
	}
	seen := map[string]int{}
	for i, it := range arr {
		at := "tools." + strconv.Itoa(i)
		tool, ok := it.(map[string]any)
		if !ok {
			v.errs.Add(at, "each tool must be an object {\"type\":\"function\",\"function\":{...}}, not "+describeJSON(it))
			continue
		}
		v.extraKeys(at, tool, "type", "function")
		if t, _ := tool["type"].(string); t != "function" {
			v.errs.Add(at+".type", `type must be "function"`)
		}
		fn, ok := tool["function"].(map[string]any)
		if !ok {
			v.errs.Add(at+".function", "function is required: an object with a name and parameters")
			continue
		}
		v.extraKeys(at+".function", fn, "name", "description", "parameters", "strict")
		name, ok := fn["name"].(string)
		switch {
		case !ok:
			v.errs.Add(at+".function.name", "the function needs a name")
		case !nameRE.MatchString(name):
			v.errs.Add(at+".function.name", fmt.Sprintf("function name %q must be 1 to 64 letters, digits, underscores or dashes", name))
		default:
			if j, dup := seen[name]; dup {
				v.errs.Add(at+".function.name", fmt.Sprintf("tool %d is already named %q", j, name))
			}
			seen[name] = i
		}
		if d, ok := fn["description"]; ok && d != nil {
			if _, ok := d.(string); !ok {
				v.errs.Add(at+".function.description", "description must be a string")
			}
		}
		if s, ok := fn["strict"]; ok && s != nil {
			if _, ok := s.(bool); !ok {
				v.errs.Add(at+".function.strict", "strict must be true or false")
			}
		}
		if ps, ok := fn["parameters"]; ok && ps != nil {
			if _, ok := ps.(map[string]any); !ok {
				v.errs.Add(at+".function.parameters", "parameters must be a JSON Schema object, not "+describeJSON(ps))
			} else if msg := schemaProblem(ps); msg != "" {
				v.errs.Add(at+".function.parameters", msg)
			}
		}
	}
}

func (v *validator) toolChoice(p Param, val any) {
	switch c := val.(type) {
	case string:
		if !slices.Contains(p.Enum, c) {
			v.errs.Add("tool_choice", fmt.Sprintf("tool_choice must be %s or an object naming a function, not %q", orList(p.Enum), c))
		}
	case map[string]any:
		v.extraKeys("tool_choice", c, "type", "function")
		if t, _ := c["type"].(string); t != "function" {
			v.errs.Add("tool_choice.type", `tool_choice.type must be "function"`)
		}
		fn, _ := c["function"].(map[string]any)
		if name, ok := fn["name"].(string); !ok || name == "" {
			v.errs.Add("tool_choice.function.name", "tool_choice.function.name is required: the tool to call")
		}
	default:
		v.errs.Add("tool_choice", fmt.Sprintf("tool_choice must be %s or an object naming a function, not %s", orList(p.Enum), describeJSON(val)))
	}
}

func (v *validator) toolsConsistency() {
	tools, hasTools := v.body["tools"].([]any)
	hasTools = hasTools && len(tools) > 0
	if v.fine("parallel_tool_calls") && !hasTools {
		v.errs.Add("parallel_tool_calls", "parallel_tool_calls only applies when tools are given")
	}
	if !v.fine("tool_choice") {
		return
	}
	choice := v.body["tool_choice"]
	if !hasTools {
		v.errs.Add("tool_choice", "tool_choice needs tools: add a tool or remove tool_choice")
		return
	}
	obj, ok := choice.(map[string]any)
	if !ok {
		return
	}
	fn, _ := obj["function"].(map[string]any)
	want, _ := fn["name"].(string)
	for _, it := range tools {
		tool, _ := it.(map[string]any)
		f, _ := tool["function"].(map[string]any)
		if name, _ := f["name"].(string); name == want {
			return
		}
	}
	v.errs.Add("tool_choice.function.name", fmt.Sprintf("no tool is named %q", want))
}
