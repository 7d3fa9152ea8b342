//go:build fencestages

package linux

import "github.com/fence-sandbox/fence/internal/stagetime"

// In a binary built with the fencestages tag (see package stagetime),
// the end of the plan's lowering, just before the clone, is marked too.
func init() {
	testOnlyLowered = func(*program) { stagetime.Mark("lowered") }
}
