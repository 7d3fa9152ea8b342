package linux

import (
	"os"
	"sync/atomic"
	"time"
)

// watchTimeout kills p (the sandbox's init, whose death ends every process
// of the pid namespace) when d has passed; fired says whether it did.
func watchTimeout(p *os.Process, d time.Duration) (fired func() bool, stop func()) {
	if d <= 0 {
		return func() bool { return false }, func() {}
	}
	var done atomic.Bool
	t := time.AfterFunc(d, func() {
		done.Store(true)
		p.Kill()
	})
	return done.Load, func() { t.Stop() }
}
