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
	// TmpSizeMB and ShmSizeMB are the sizes of the private /tmp and
	// /dev/shm; zero means the default share of memory (TmpfsDefaults).
	TmpSizeMB uint64 `json:"tmpSizeMB,omitempty"`
	ShmSizeMB uint64 `json:"shmSizeMB,omitempty"`
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
	l.TmpSizeMB = lower(l.TmpSizeMB, o.TmpSizeMB)
	l.ShmSizeMB = lower(l.ShmSizeMB, o.ShmSizeMB)
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
		TmpSizeMB: uint64(l.TmpSizeMB), ShmSizeMB: uint64(l.ShmSizeMB),
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
		key, zero string
		v         int
	}{
		{"limits.cpuSeconds", "no limit", l.CPUSeconds}, {"limits.addressSpaceMB", "no limit", l.AddressSpaceMB},
		{"limits.fileSizeMB", "no limit", l.FileSizeMB}, {"limits.openFiles", "no limit", l.OpenFiles},
		{"limits.processes", "no limit", l.Processes},
		{"limits.tmpSizeMB", "fence's default share of memory", l.TmpSizeMB},
		{"limits.shmSizeMB", "fence's default share of memory", l.ShmSizeMB},
	} {
		if c.v < 0 {
			return c.key, fmt.Sprintf("%d is negative: want a positive number, or leave it out for %s", c.v, c.zero)
		}
	}
	if l.OpenFiles > 0 && l.OpenFiles < MinOpenFiles {
		return "limits.openFiles", fmt.Sprintf("%d is too few: want at least %d", l.OpenFiles, MinOpenFiles)
	}
	return "", ""
}

// The default sizes of the sandbox's memory-backed /tmp and /dev/shm are
// these shares of the memory fence may use: the lower of the machine's
// memory and the memory limit of fence's cgroup. Together they can hold
// three eighths of it, where the kernel's default would let each hold a
// half of all memory.
const (
	TmpShareDivisor = 4 // /tmp: a quarter
	ShmShareDivisor = 8 // /dev/shm: an eighth
)

// TmpfsDefaults returns the default sizes of /tmp and /dev/shm, in MiB,
// for memory bytes of memory (at least 1 MiB each).
func TmpfsDefaults(memory uint64) (tmpMB, shmMB uint64) {
	return max(memory/TmpShareDivisor>>20, 1), max(memory/ShmShareDivisor>>20, 1)
}

// BytesPerInode is how much of a memory-backed tree's size each of its
// files is granted: its inode limit is the size over this (at least
// MinInodes). An empty file takes no pages but about a kilobyte of kernel
// memory, so a tree of tiny files costs at most an eighth more than its
// size, where the kernel's default would allow millions of them.
const (
	BytesPerInode = 8 << 10
	MinInodes     = 1024
)

// TmpfsInodes is the inode limit of a memory-backed tree of sizeMB MiB.
func TmpfsInodes(sizeMB uint64) uint64 {
	return max(sizeMB<<20/BytesPerInode, MinInodes)
}
