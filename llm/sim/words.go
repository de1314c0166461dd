package sim

// The simulator's phrase banks. Each bank is ordered by preference: the
// first entries are what greedy decoding (temperature 0) writes. All of
// them are read-only.

// openers start a chat answer by saying what the simulator is.
var openers = []string{
	"This is the Knobs simulator, not a real model, so what follows is generated text about {topic} rather than a considered answer.",
	"I am the Knobs simulator, not a real language model: the text below is shaped by your prompt about {topic}, but nobody thought it through.",
	"Knobs simulator here, not a real model; treat this reply about {topic} as placeholder text for trying the playground offline.",
	"Note that this answer comes from the Knobs simulator, not a real model, and only echoes the themes of {topic}.",
	"You are talking to the Knobs simulator, not a real model, so take this take on {topic} as a stand-in.",
}

// completionOpeners start a raw text completion.
var completionOpeners = []string{
	"(The Knobs simulator continues here; it is not a real model.) On {topic}, the text goes on.",
	"[Knobs simulator, not a real model: continuing a prompt about {topic}.]",
	"(Simulated continuation from Knobs, not a real model, about {topic}.)",
}

// toolOpeners start an answer that follows a tool result.
var toolOpeners = []string{
	"This is the Knobs simulator, not a real model: the tool returned a result, and here is a made-up answer built around {topic}.",
	"The Knobs simulator (not a real model) read the tool's result; the summary below about {topic} is generated text.",
}

var bodySentences = []string{
	"The short version is that {a} matters most where it meets {b}.",
	"A useful first step is to separate what {a} does from how it is configured.",
	"{A} tends to show its limits when {b} changes quickly or runs under load.",
	"In practice, {a} and {b} are easier to reason about with one small, concrete example.",
	"A common mistake is to treat {a} as fixed, when it usually depends on {b}.",
	"The trade-off is between simplicity and control: every extra knob on {a} is another way to get {b} wrong.",
	"If you can measure only one thing, measure how {a} behaves over time.",
	"Most of the confusion around {a} comes from mixing up the goal with the mechanism.",
	"It helps to write down what a good result for {a} would look like before changing anything.",
	"{A} is rarely the whole story; {b} usually explains the rest.",
	"People who work with {a} every day tend to keep the setup boring and the feedback fast.",
	"When {b} is involved, small defaults can have surprisingly large effects on {a}.",
	"A real model would now weigh the evidence about {a}; the simulator only arranges the words.",
	"Try changing one parameter at a time, so that any difference in {a} has a clear cause.",
	"There is no single right answer about {a}, but there are a few wrong ones worth avoiding.",
	"Think of {a} as a budget: spending more on it leaves less room for {b}.",
	"The details of {b} depend on context that a prompt this short cannot carry.",
	"Examples beat definitions here: one worked case of {a} says more than a page of theory.",
	"If {a} looks wrong, check the inputs before blaming {b}.",
	"Over time, the cost of {a} is set less by the first version than by every change after it.",
	"Seen from the outside, {a} looks simple; the interesting part is how it fails.",
	"Whatever you decide about {a}, write the reason down next to the decision.",
}

var headings = []string{
	"## {Topic}",
	"## How {a} works",
	"### Things to check about {a}",
	"## {A} and {b}",
	"## In practice",
	"### A closer look at {a}",
	"## Summary",
}

var listIntros = []string{
	"A few points worth checking:",
	"In short:",
	"Things to keep in mind:",
	"Where to look first:",
	"The main factors, roughly in order:",
}

var listClauses = []string{
	"what it costs to change later",
	"how it behaves under load",
	"where it fails first",
	"who depends on it",
	"how to test it offline",
	"what the defaults hide",
	"how it interacts with {b}",
	"which numbers show that it works",
	"what a smaller version would look like",
}

var stepsIntros = []string{
	"One way to go about it:",
	"A simple plan:",
	"Step by step:",
}

var steps = []string{
	"Start with a small example of {a}.",
	"Change one setting and compare the results.",
	"Write down what changed and why.",
	"Repeat the experiment with {b} in the picture.",
	"Keep the version that is easiest to explain.",
	"Ask a real model the same question and compare.",
}

var codeIntros = []string{
	"Here is a small sketch in {lang}; it is illustrative, not tested:",
	"A minimal {lang} example, made up by the simulator:",
	"Something like this, in {lang}, shows the shape of it:",
}

// codeSamples are code blocks by language; {name} is an identifier made
// from a key word.
var codeSamples = map[string]string{
	"go": `// {name} is a placeholder written by the Knobs simulator.
func {name}(input string) (string, error) {
	if input == "" {
		return "", errors.New("{name}: empty input")
	}
	return strings.TrimSpace(input), nil
}
`,
	"python": `def {name}(items):
    """Placeholder written by the Knobs simulator."""
    return [item.strip() for item in items if item]
`,
	"javascript": `// {name} is a placeholder written by the Knobs simulator.
function {name}(items) {
  return items.filter(Boolean).map((item) => item.trim());
}
`,
	"sql": `-- {name}: a placeholder query written by the Knobs simulator.
SELECT id, name, created_at
FROM {name}
WHERE created_at > date('now', '-7 days')
ORDER BY created_at DESC;
`,
	"bash": `#!/usr/bin/env bash
# {name}: a placeholder script written by the Knobs simulator.
set -euo pipefail
for f in "$@"; do
  echo "processing $f"
done
`,
	"rust": `// {name} is a placeholder written by the Knobs simulator.
fn {name}(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() { None } else { Some(trimmed.to_string()) }
}
`,
}

var closers = []string{
	"Since this is simulated output, run the same prompt against a real provider when you need an actual answer.",
	"That is as far as a simulator can go; a real model would tailor this to your case.",
	"Switch the provider from sim to a real one to see how an actual model handles {topic}.",
	"All of the above was generated by the Knobs simulator from the words of your prompt.",
}

var thinkOpeners = []string{
	"The user is asking about {topic}.",
	"So the question is about {topic}.",
	"Okay, this prompt is about {topic}.",
}

var thinkSentences = []string{
	"I should say plainly that this is the Knobs simulator, not a real model.",
	"Key words in the prompt: {a} and {b}.",
	"Let me think about how {a} relates to {b}.",
	"Maybe start with a direct answer, then a short list.",
	"Is there a catch with {a}? Possibly the defaults.",
	"I could mention {b} as a second angle.",
	"Keep it short and plain; no need to over-explain {a}.",
	"Check: does the answer actually address {topic}? Roughly, yes.",
	"Alternatively, frame {a} as a trade-off against {b}.",
	"Wait, {b} might matter more than {a} here. Hmm, both then.",
	"What would a careful reader want to know about {a} first?",
	"A heading might help if the answer gets long.",
	"Let me not invent numbers about {a}; the simulator has none.",
	"Consider the simplest case of {a} before the general one.",
}

// stopWords carry no topic: they are skipped when reading a prompt.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one", "our",
		"out", "day", "get", "has", "him", "his", "how", "man", "new", "now", "old", "see", "two", "way", "who",
		"boy", "did", "its", "let", "put", "say", "she", "too", "use", "that", "with", "have", "this", "will",
		"your", "from", "they", "know", "want", "been", "good", "much", "some", "time", "very", "when", "come",
		"here", "just", "like", "long", "make", "many", "more", "only", "over", "such", "take", "than", "them",
		"well", "were", "what", "which", "while", "about", "would", "there", "their", "could", "other", "after",
		"first", "these", "those", "where", "should", "because", "into", "also", "then", "does", "doing", "done",
		"each", "even", "ever", "every", "give", "going", "gone", "into", "it's", "i'm", "don't", "can't",
		"may", "might", "must", "need", "please", "tell", "explain", "describe", "write", "show", "give",
		"me", "my", "mine", "yours", "ours", "why", "yes", "no", "too", "very", "really", "thing", "things",
		"something", "anything", "everything", "nothing", "someone", "anyone", "is", "am", "be", "being",
		"was", "were", "do", "doesn't", "isn't", "aren't", "what's", "how's", "there's", "let's", "shall",
		"own", "same", "both", "few", "most", "further", "once", "again", "still", "yet", "off", "down", "under",
		"above", "below", "between", "through", "during", "before", "without", "within", "along", "across",
		"using", "used", "uses", "able", "way", "ways", "kind", "sort", "lot", "lots", "bit", "maybe",
		"briefly", "short", "simple", "simply", "quick", "quickly", "detail", "details", "answer", "question",
		"help", "hello", "thanks", "thank", "hi", "hey", "okay", "sure", "could", "would", "shouldn't",
		"whether", "though", "although", "however", "therefore", "thus", "else", "instead", "rather",
		"call", "tool", "tools", "function", "work", "works", "working", "small", "big", "large", "best",
		"better", "good", "great", "nice", "example", "examples", "find", "look", "looks", "try", "think",
		"versus", "per", "via", "etc", "based", "compared", "compare", "comparison", "different", "difference", "new", "old", "important", "possible", "actually", "basically", "just",
	} {
		m[w] = true
	}
	return m
}()
