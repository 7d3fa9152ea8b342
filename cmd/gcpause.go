package cmd

import (
	"runtime/debug"
	"sync"
)

// A run collects no garbage while it starts: on a plan cache hit the
// supervisor makes a few megabytes of short-lived objects (the entry's
// decoding, the check of its reads), and a collection then costs more
// than the memory, above all once the sandbox child is cloned, when every
// page the collector writes is copied for the child. The collector is
// back on as soon as the command has started, and at once when the run
// loads and plans afresh (planning a large tree makes far more); and the
// pause has a memory limit: past startMemoryLimit the collector runs
// anyway. (Turned back on from a timer 100 ms after the start instead,
// it lost a Ctrl-C typed right after fg of a stopped command in
// TestJobControl.)

// startMemoryLimit bounds the memory a run's start-up may take with the
// collector paused.
const startMemoryLimit = 32 << 20

// pauseGC turns the collector off, within startMemoryLimit (or a lower
// limit of the user's, GOMEMLIMIT), and returns what turns it back on as
// it was; that may be called more than once.
func pauseGC() (resume func()) {
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(limit, startMemoryLimit))
	return sync.OnceFunc(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}
