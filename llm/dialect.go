package llm

import "strings"

// wireDialect is how one dialect's wire behaviour differs.
// All dialects read both reasoning fields and every error body shape, since
// a server that sends the other one is no reason to lose its text.
type wireDialect struct {
	// includeUsage adds stream_options.include_usage, without which xAI and
	// OpenAI-compatible servers send no usage at all in a stream.
	includeUsage bool
	// thinkTags splits "<think>...</think>" at the start of content into
	// reasoning: some models behind OpenAI-compatible servers reason inline.
	// Cerebras is left alone: there inline tags mean the user asked for
	// reasoning_format "raw" and wants to see them.
	thinkTags bool
	// reasoningApart says usage.completion_tokens leaves the reasoning
	// tokens out (xAI); elsewhere it includes them.
	reasoningApart bool
	// needsKey says a model list cannot be had without a key.
	needsKey bool
	// extraModels names a second model list with prices and limits.
	extraModels string
}

func dialectOf(d Dialect) wireDialect {
	switch d {
	case DialectCerebras:
		return wireDialect{includeUsage: true, needsKey: true, extraModels: "/v1/models?format=openrouter"}
	case DialectXAI:
		return wireDialect{includeUsage: true, reasoningApart: true, needsKey: true, extraModels: "/v1/language-models"}
	case DialectSim:
		return wireDialect{includeUsage: true}
	default:
		return wireDialect{includeUsage: true, thinkTags: true}
	}
}

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkSplitter separates reasoning in <think> tags from the content of one
// choice. Tags may be split across chunks, so text that could be the start
// of a tag is held back until the next chunk decides it. Only a tag at the
// very start of the answer counts: later ones are the model talking about
// tags.
type thinkSplitter struct {
	state int // thinkUndecided, thinkInside or thinkDone
	held  string
}

const (
	thinkUndecided = iota
	thinkInside
	thinkDone
)

// feed takes the next content fragment and returns its reasoning and
// content parts; reasoning always comes before content in one fragment.
func (t *thinkSplitter) feed(s string) (reasoning, content string) {
	switch t.state {
	case thinkDone:
		return "", s
	case thinkUndecided:
		buf := t.held + s
		rest := strings.TrimLeft(buf, " \t\r\n")
		switch {
		case strings.HasPrefix(rest, thinkOpen):
			t.state, t.held = thinkInside, ""
			return t.inside(rest[len(thinkOpen):])
		case strings.HasPrefix(thinkOpen, rest): // empty or a tag's start
			t.held = buf
			return "", ""
		default:
			t.state, t.held = thinkDone, ""
			return "", buf
		}
	default:
		buf := t.held + s
		t.held = ""
		return t.inside(buf)
	}
}

func (t *thinkSplitter) inside(buf string) (reasoning, content string) {
	if i := strings.Index(buf, thinkClose); i >= 0 {
		t.state = thinkDone
		return buf[:i], buf[i+len(thinkClose):]
	}
	k := partialSuffix(buf, thinkClose)
	t.held = buf[len(buf)-k:]
	return buf[:len(buf)-k], ""
}

// flush returns what is held back when the stream ends.
func (t *thinkSplitter) flush() (reasoning, content string) {
	h := t.held
	t.held = ""
	if t.state == thinkInside {
		return h, ""
	}
	return "", h
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag.
func partialSuffix(s, tag string) int {
	for k := min(len(s), len(tag)-1); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}
