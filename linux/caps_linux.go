package linux

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Securebits (linux/securebits.h): uid 0 gets no capabilities from exec,
// setuid transitions do not adjust them, no ambient raise; all locked.
const secureBits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7

func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("read cap_last_cap: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// hasCapabilities reports whether this thread holds any permitted
// capability (a caller without them has nothing to drop).
func hasCapabilities() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true
	}
	return data[0].Permitted != 0 || data[1].Permitted != 0
}
