package runner

import (
	"encoding/json"
	"testing"
)

// The hand-written frames carry the bytes json.Marshal would.
func TestTextFrameIsWhatJSONWouldWrite(t *testing.T) {
	texts := []string{
		"", "plain words", ` "quoted" \ back\slash`, "<b>&amp;</b>", "line\nbreak\r\ttab\b\f",
		"\x00\x01\x1f\x7f", "héllo wörld 日本語 🚀", "\u2028\u2029", "bad \xff utf-8 \xe2\x82", "end\xc3",
	}
	for _, text := range texts {
		payload, err := json.Marshal(textData{3, text})
		if err != nil {
			t.Fatal(err)
		}
		want := string(frame(12, "delta", payload))
		if got := string(textFrame(12, "delta", 3, text)); got != want {
			t.Errorf("textFrame(%q)\n got %q\nwant %q", text, got, want)
		}
	}
}

func FuzzTextFrame(f *testing.F) {
	f.Add("a<b>\"c\"\n\u2028\xff")
	f.Fuzz(func(t *testing.T, text string) {
		payload, _ := json.Marshal(textData{0, text})
		if got, want := textFrame(1, "delta", 0, text), frame(1, "delta", payload); string(got) != string(want) {
			t.Errorf("textFrame(%q) = %q, want %q", text, got, want)
		}
	})
}

// Frames cut from the shared block are the frames textFrame builds, stay
// unchanged as later frames are added, and cannot be appended into.
func TestEmitTextSharesBlocksSafely(t *testing.T) {
	run := &Run{changed: make(chan struct{})}
	var want [][]byte
	for i := range 5000 {
		text := "tok"
		switch i % 7 {
		case 3:
			text = string(make([]byte, 600)) // NULs: 6 bytes each escaped, outgrows the reserve
		case 5:
			text = string(make([]byte, 40<<10)) // larger than a block
		}
		event := "delta"
		if i%2 == 1 {
			event = "reasoning"
		}
		run.emitText(event, i%3, text)
		want = append(want, textFrame(i+1, event, i%3, text))
	}
	for i, f := range run.frames {
		if string(f) != string(want[i]) {
			t.Fatalf("frame %d changed:\n got %.80q\nwant %.80q", i, f, want[i])
		}
		if cap(f) != len(f) {
			t.Fatalf("frame %d has room to grow into its neighbour: len %d cap %d", i, len(f), cap(f))
		}
	}
}
