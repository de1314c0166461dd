package llm

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any goroutine is left behind:
// every stream, timer and connection must be ended by its owner.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
