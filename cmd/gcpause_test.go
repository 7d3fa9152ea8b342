package cmd

import (
	"runtime/debug"
	"testing"
)

// TestPauseGC: the pause turns the collector off within the start-up's
// memory limit (or a lower one of the user's), and resume, however often
// called, gives back the percent and limit it found.
func TestPauseGC(t *testing.T) {
	for _, userLimit := range []int64{-1, 8 << 20} {
		oldPercent := debug.SetGCPercent(150)
		oldLimit := debug.SetMemoryLimit(-1)
		if userLimit >= 0 {
			debug.SetMemoryLimit(userLimit)
		}
		before := debug.SetMemoryLimit(-1)
		resume := pauseGC()
		if p := debug.SetGCPercent(-1); p != -1 {
			t.Errorf("paused, the collector's percent is %d, want off", p)
		}
		if l := debug.SetMemoryLimit(-1); l != min(before, startMemoryLimit) {
			t.Errorf("paused, the memory limit is %d, want %d", l, min(before, startMemoryLimit))
		}
		resume()
		resume()
		if p := debug.SetGCPercent(150); p != 150 {
			t.Errorf("resumed, the collector's percent is %d, want 150", p)
		}
		if l := debug.SetMemoryLimit(-1); l != before {
			t.Errorf("resumed, the memory limit is %d, want %d", l, before)
		}
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}
