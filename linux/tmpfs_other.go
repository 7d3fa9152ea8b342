//go:build !linux

package linux

import "github.com/fence-sandbox/fence/policy"

// Memory is not read off Linux.
type Memory struct {
	Bytes, Total, CgroupMB uint64
	Cgroup                 string
}

func (Memory) String() string { return "unknown off Linux" }

// ReadMemory is zero off Linux.
func ReadMemory() Memory { return Memory{} }

// TmpfsSizes are the Linux sandbox's /tmp and /dev/shm sizes.
type TmpfsSizes struct {
	TmpMB, ShmMB           uint64
	TmpDefault, ShmDefault bool
	Memory                 Memory
}

// SizeTmpfs gives only the limits that are set off Linux.
func SizeTmpfs(l policy.RunLimits) TmpfsSizes { return TmpfsSizesOf(l, Memory{}) }

// TmpfsSizesOf gives only the limits that are set off Linux.
func TmpfsSizesOf(l policy.RunLimits, _ Memory) TmpfsSizes {
	return TmpfsSizes{TmpMB: l.TmpSizeMB, ShmMB: l.ShmSizeMB, TmpDefault: l.TmpSizeMB == 0, ShmDefault: l.ShmSizeMB == 0}
}
