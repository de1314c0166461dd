// Package arena holds the arithmetic of a blind arena: it ranks
// contestants from votes (Rank), picks the next pair for a voter
// (Scheduler) and hides names in answers while voters vote (Masker). It
// stores nothing and serves nothing; the arena's pages and API use it.
//
// The text below is shown to users on the results page's help.
//
// # How the ranking is computed
//
// Every vote compares two contestants on one prompt. The ranking fits the
// Bradley–Terry model to all votes: each contestant has a strength, and
// the chance that contestant i beats contestant j is
// strength(i) / (strength(i) + strength(j)). The strengths are the ones
// that make the votes cast most likely (maximum likelihood, found by
// Newton's method to within a millionth of a point, in at most 100 steps).
// Unlike an Elo rating updated vote by vote, the result does not depend on
// the order in which votes arrived.
//
// The score is 1000 + 400·log10(strength), shifted so that the scores
// average 1000: a contestant 400 points above another is expected to win
// 10 votes to 1 against it, 100 points above about 64% of the time, and
// equal scores mean even chances.
//
// Ties and "both bad": a tie counts as half a win for each side. "Both
// bad" counts the same way, as a tie: the voter saw no difference in
// quality between the two. Both are shown separately in the counts. The
// position figure (below) leaves ties and "both bad" out.
//
// The prior: before any vote, each contestant is given one tie against an
// imaginary contestant of average strength (score 1000). This keeps the
// score of a contestant that won (or lost) every vote finite, and pulls
// scores built on few votes gently towards the middle; after a few dozen
// votes its effect is small.
//
// # The intervals
//
// The 95% interval of a score is found by the bootstrap: the votes are
// drawn again at random, as many as there were, with replacement (some
// votes twice, some not at all), and the ranking is computed again, 1,000
// times by default. The interval runs from the 2.5th to the 97.5th
// percentile of the contestant's score over those rounds. The random
// draws are seeded, so the same votes always give the same intervals. When
// two contestants' intervals overlap a lot, the votes do not yet show
// which one is better; more votes narrow the intervals.
//
// # The win-rate matrix
//
// Each cell is how the row's contestant did against the column's:
// (wins + ties/2) / votes between the two, with the counts. A cell is
// empty when the two never met.
//
// # Position bias
//
// People tend to favour the answer they read first. Each pair's sides are
// random and balanced, so this does not favour a contestant, but it is
// measured: the share of decisive votes (A or B, not tie or both bad)
// that went to the answer shown as A, with its 95% Wilson interval. 50%
// means no bias; an interval that leaves out 50% shows a real one.
//
// # Which pair comes next
//
// A voter gets the pair of contestants compared least so far (ties drawn
// at random), on the prompt that pair was compared on least, and never a
// prompt and pair they have voted on already. Of the two, the one shown
// as A less often in that pair goes on the A side (at random when even).
//
// # Hiding names
//
// While voting, names that could give a contestant away are replaced by
// "[model]" in both answers: providers and model families (OpenAI, GPT,
// ChatGPT, Anthropic, Claude, Meta, Llama, Google, Gemini, Gemma, xAI,
// Grok, Mistral, Mixtral, Qwen, Alibaba, DeepSeek, Cerebras, Cohere,
// Command R, Microsoft, Phi, Nvidia, Nemotron, Amazon, Nova, the Knobs
// simulator and more), and the arena's own terms (its contestants'
// names, model ids, anything added). The reveal after a vote shows the
// text as written.
//
// Names match whole words, in any case ("GROK", "grok"), with what
// follows them as a version: "gpt-4o-mini", "llama3.1-8b", "Claude 3.5
// Sonnet", "grok-4", "Qwen2.5-72B-Instruct" each become one "[model]".
// Possessives and plurals are masked too ("Claude's" becomes
// "[model]'s", "GPTs" becomes "[model]"), and so are names next to
// punctuation or to letters of other scripts ("我是Claude"). A name inside
// a longer word is left alone: "philosophy" keeps its "phi", "metadata"
// its "meta". The OpenAI models o1, o3 and o4 and the names GLM, Yi, PaLM
// and sim are masked only with a version after them ("o3-mini",
// "GLM-4"), since alone they are ordinary words or symbols (ozone is
// O3). An arena's term matches with any of space, -, _, . or : between its
// words, or none: "Team Blue" also hides "team-blue" and "TEAM_BLUE".
//
// Known limits: the built-in names are also ordinary words, and are
// masked as such: "bossa nova", the letter "phi", "a meta-analysis"
// (becomes "a [model]-analysis"), "Amazon" the river. A number after a
// name is taken for a version ("Claude 3 times" becomes "[model] times").
// Names glued to another word ("MyClaudeBot"), spelled out letter by
// letter, or written with look-alike letters of another alphabet are not
// found; add such terms to the arena when they matter.
package arena
