package policy

import (
	"fmt"
	"time"
)

// MinOpenFiles is the least limits.openFiles may be: the sandbox's init
// and the command's own start-up need a few descriptors.
const MinOpenFiles = 16

// RunLimits are Limits with their meaning fixed.
type RunLimits struct {
	Timeout        time.Duration `json:"timeout,omitempty"`
	CPUSeconds     uint64        `json:"cpuSeconds,omitempty"`
	AddressSpaceMB uint64        `json:"addressSpaceMB,omitempty"`
	FileSizeMB     uint64        `json:"fileSizeMB,omitempty"`
	OpenFiles      uint64        `json:"openFiles,omitempty"`
	Processes      uint64        `json:"processes,omitempty"`
}

// IsZero reports whether no limit is set.
func (l RunLimits) IsZero() bool { return l == RunLimits{} }

// Tighter combines two sets of limits, keeping the lower of each pair
// where both are set: a limit given for one run can tighten what the
// policy says, never loosen it.
func (l RunLimits) Tighter(o RunLimits) RunLimits {
	l.Timeout = lower(l.Timeout, o.Timeout)
	l.CPUSeconds = lower(l.CPUSeconds, o.CPUSeconds)
	l.AddressSpaceMB = lower(l.AddressSpaceMB, o.AddressSpaceMB)
	l.FileSizeMB = lower(l.FileSizeMB, o.FileSizeMB)
	l.OpenFiles = lower(l.OpenFiles, o.OpenFiles)
	l.Processes = lower(l.Processes, o.Processes)
	return l
}

func lower[T time.Duration | uint64](a, b T) T {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}

// compileLimits turns validated Limits into RunLimits.
func compileLimits(l Limits) RunLimits {
	timeout, _ := time.ParseDuration(l.Timeout)
	return RunLimits{
		Timeout: timeout, CPUSeconds: uint64(l.CPUSeconds), AddressSpaceMB: uint64(l.AddressSpaceMB),
		FileSizeMB: uint64(l.FileSizeMB), OpenFiles: uint64(l.OpenFiles), Processes: uint64(l.Processes),
	}
}

// checkLimits says what is wrong with l, naming the key, or "" when
// nothing is.
func checkLimits(l Limits) (key, problem string) {
	if l.Timeout != "" {
		d, err := time.ParseDuration(l.Timeout)
		if err != nil || d <= 0 {
			return "limits.timeout", fmt.Sprintf("%q is not a positive duration such as \"30s\" or \"10m\"", l.Timeout)
		}
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"limits.cpuSeconds", l.CPUSeconds}, {"limits.addressSpaceMB", l.AddressSpaceMB}, {"limits.fileSizeMB", l.FileSizeMB}, {"limits.openFiles", l.OpenFiles}, {"limits.processes", l.Processes}} {
		if c.v < 0 {
			return c.key, fmt.Sprintf("%d is negative: want a positive number, or leave it out for no limit", c.v)
		}
	}
	if l.OpenFiles > 0 && l.OpenFiles < MinOpenFiles {
		return "limits.openFiles", fmt.Sprintf("%d is too few: want at least %d", l.OpenFiles, MinOpenFiles)
	}
	return "", ""
}
