package linux

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// dropCapabilities empties the ambient, inheritable, permitted and
// effective capability sets of every thread and the bounding set of the
// calling thread, and locks the securebits so that executing a program as
// uid 0 grants nothing back. After it, a root caller's command is as
// powerless as anyone's. The caller must be locked to its OS thread.
func dropCapabilities() error {
	last, err := lastCap()
	if err != nil {
		return err
	}
	// The bounding set only matters to a thread that executes a program:
	// the init runs the command from this (locked) thread.
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	if err := allThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	if err := allThreadsPrctl(unix.PR_SET_SECUREBITS, secureBits, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECUREBITS): %w", err)
	}
	// With permitted sets empty on every thread, nothing can raise a
	// capability again.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}

// Securebits (linux/securebits.h): uid 0 gets no capabilities from exec,
// setuid transitions do not adjust them, no ambient raise; all locked.
const secureBits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7

func allThreadsPrctl(option int, arg2, arg3 uintptr) error {
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), arg2, arg3, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

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
