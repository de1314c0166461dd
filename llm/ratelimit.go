package llm

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RateLimit is what a provider's x-ratelimit-* headers said about its
// budgets, one bucket per header suffix: Cerebras sends "requests-day" and
// "tokens-minute", OpenAI and Groq "requests" and "tokens".
type RateLimit struct {
	Buckets []RateBucket `json:"buckets,omitempty"`
}

// RateBucket is one budget. Limit and Remaining are -1 when not sent.
type RateBucket struct {
	Name      string        `json:"name"`
	Limit     int64         `json:"limit"`
	Remaining int64         `json:"remaining"`
	Reset     time.Duration `json:"reset"` // until the budget refills; 0 when not sent
}

// Bucket returns the bucket with the given name.
func (r RateLimit) Bucket(name string) (RateBucket, bool) {
	for _, b := range r.Buckets {
		if b.Name == name {
			return b, true
		}
	}
	return RateBucket{}, false
}

// ParseRateLimit reads the x-ratelimit-{limit,remaining,reset}-NAME headers.
func ParseRateLimit(h http.Header) RateLimit {
	var rl RateLimit
	bucket := func(name string) *RateBucket {
		for i := range rl.Buckets {
			if rl.Buckets[i].Name == name {
				return &rl.Buckets[i]
			}
		}
		rl.Buckets = append(rl.Buckets, RateBucket{Name: name, Limit: -1, Remaining: -1})
		return &rl.Buckets[len(rl.Buckets)-1]
	}
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		key := strings.ToLower(k)
		rest, ok := strings.CutPrefix(key, "x-ratelimit-")
		if !ok {
			continue
		}
		what, name, ok := strings.Cut(rest, "-")
		if !ok || name == "" {
			continue
		}
		v := strings.TrimSpace(vs[0])
		switch what {
		case "limit":
			if n, ok := parseCount(v); ok {
				bucket(name).Limit = n
			}
		case "remaining":
			if n, ok := parseCount(v); ok {
				bucket(name).Remaining = n
			}
		case "reset":
			if d, ok := parseReset(v); ok {
				bucket(name).Reset = d
			}
		}
	}
	slices.SortFunc(rl.Buckets, func(a, b RateBucket) int { return strings.Compare(a.Name, b.Name) })
	return rl
}

func parseCount(v string) (int64, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return int64(f), true
}

// parseReset reads seconds as a number (Cerebras: "33.4") or a Go-style
// duration (OpenAI, Groq: "6m0s", "120ms").
func parseReset(v string) (time.Duration, bool) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return 0, false
		}
		return time.Duration(f * float64(time.Second)), true
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	return 0, false
}

// retryAfter is how long to wait before trying again: Retry-After (seconds
// or a date), retry-after-ms, or else the reset of an exhausted rate-limit
// bucket (the soonest one when the headers do not say which ran out).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	var exhausted, soonest time.Duration
	for _, b := range ParseRateLimit(h).Buckets {
		if b.Reset <= 0 {
			continue
		}
		if b.Remaining == 0 && b.Reset > exhausted {
			exhausted = b.Reset
		}
		if soonest == 0 || b.Reset < soonest {
			soonest = b.Reset
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return soonest
}
