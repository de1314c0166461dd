package sim

// CountTokens counts the tokens of s as the simulator's tokenizer splits
// it: the count the playground's estimate (static/js/controls.js) mirrors,
// and an estimate for hosted models.
func CountTokens(s string) int { return countTokens(s) }
