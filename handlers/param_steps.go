package handlers

import (
	"math"
	"strconv"

	"knobs/llm"
	"knobs/views"
)

// tokenLimits are the parameters bounded by the model's output or context
// length rather than by the API: their slider reaches what the model takes.
var tokenLimits = map[string]bool{"max_tokens": true, "max_completion_tokens": true}

// sliderRange is the widest range of integers a slider shows one by one;
// a seed's billions of values are typed, not slid.
const sliderRange = 1000

// fitSteps gives a bounded number its slider and the step its arrows take.
// A number steps by a twentieth of its range rounded down to 1 or 5 times
// a power of ten (temperature 0 to 2: 0.1; top_p 0 to 1: 0.05; penalties
// -2 to 2: 0.1), so that ArrowUp on 0.7 gives 0.8 and not 1.7. An integer
// steps by 1.
func fitSteps(c *views.ParamControl, p llm.Param) {
	if p.Min == nil || p.Max == nil || *p.Max <= *p.Min {
		return
	}
	span := *p.Max - *p.Min
	switch p.Type {
	case llm.TypeNumber:
		c.Nudge = formatNumber(niceStep(span / 20))
	case llm.TypeInteger:
		if span > sliderRange {
			return
		}
		c.Nudge = "1"
	default:
		return
	}
	c.SliderMin, c.SliderMax = c.Min, c.Max
}

// fitTokenSteps gives max_tokens and max_completion_tokens a slider up to
// the model's output limit (or its context length when that is all that
// is known), stepping by a power of two: 1,024 on a 131k context. The box
// keeps its API bounds: the limit only sizes the slider.
func fitTokenSteps(c *views.ParamControl, m llm.Model) {
	if !tokenLimits[c.Name] || c.Kind != "integer" {
		return
	}
	limit := m.MaxOutput
	if limit == 0 {
		limit = m.ContextLength
	}
	if limit < 2 {
		return
	}
	step := 1
	for step*2 <= limit/128 {
		step *= 2
	}
	c.Nudge = strconv.Itoa(step)
	// -1 (the model's maximum) and 0 are typed; the slider starts at 1.
	c.SliderMin, c.SliderMax = "1", strconv.Itoa(limit)
}

// niceStep rounds x down to 1 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(x)))
	if x >= 5*pow {
		return 5 * pow
	}
	return pow
}

// formatNumber writes f as short as it reads (0.1, not 0.1000000001).
func formatNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', 12, 64)
}
