//go:build linux

package linux

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSeccompOtherProcessRules runs the filter in x/net/bpf's
// interpreter on the calls that act on another process: the namespace
// engine's filter lets them through (the pid namespace hides the
// supervisor); the Landlock-only engine's refuses every one that does not
// name the caller alone, and lets reads and pid 0 through.
func TestSeccompOtherProcessRules(t *testing.T) {
	const pid = 4242
	calls := []struct {
		name   string
		nr     uint32
		args   [4]uint32
		refuse bool // in the Landlock-only engine
	}{
		{"prlimit64 self", unix.SYS_PRLIMIT64, [4]uint32{0, unix.RLIMIT_CORE}, false},
		{"prlimit64 pid", unix.SYS_PRLIMIT64, [4]uint32{pid, unix.RLIMIT_CORE}, true},
		{"setpriority process self", unix.SYS_SETPRIORITY, [4]uint32{unix.PRIO_PROCESS, 0, 10}, false},
		{"setpriority process pid", unix.SYS_SETPRIORITY, [4]uint32{unix.PRIO_PROCESS, pid, 10}, true},
		{"setpriority own group", unix.SYS_SETPRIORITY, [4]uint32{unix.PRIO_PGRP, 0, 10}, true},
		{"setpriority user", unix.SYS_SETPRIORITY, [4]uint32{unix.PRIO_USER, 0, 10}, true},
		{"getpriority pid", unix.SYS_GETPRIORITY, [4]uint32{unix.PRIO_PROCESS, pid}, false},
		{"ioprio_set process self", unix.SYS_IOPRIO_SET, [4]uint32{1, 0, 0}, false},
		{"ioprio_set process pid", unix.SYS_IOPRIO_SET, [4]uint32{1, pid, 0}, true},
		{"ioprio_set own group", unix.SYS_IOPRIO_SET, [4]uint32{2, 0, 0}, true},
		{"ioprio_set user", unix.SYS_IOPRIO_SET, [4]uint32{3, 0, 0}, true},
		{"ioprio_get pid", unix.SYS_IOPRIO_GET, [4]uint32{1, pid}, false},
		{"sched_setaffinity self", unix.SYS_SCHED_SETAFFINITY, [4]uint32{0}, false},
		{"sched_setaffinity pid", unix.SYS_SCHED_SETAFFINITY, [4]uint32{pid}, true},
		{"sched_getaffinity pid", unix.SYS_SCHED_GETAFFINITY, [4]uint32{pid}, false},
		{"sched_setscheduler pid", unix.SYS_SCHED_SETSCHEDULER, [4]uint32{pid}, true},
		{"sched_setparam pid", unix.SYS_SCHED_SETPARAM, [4]uint32{pid}, true},
		{"sched_setattr self", unix.SYS_SCHED_SETATTR, [4]uint32{0}, false},
		{"sched_setattr pid", unix.SYS_SCHED_SETATTR, [4]uint32{pid}, true},
	}
	for _, o := range []seccompOptions{{}, {guardModes: true, netGuard: true, guardProcesses: true}} {
		vm := filterVM(t, o)
		for _, c := range calls {
			want := uint32(retAllow)
			if c.refuse && o.guardProcesses {
				want = retEPERM
			}
			if got := runFilter(t, vm, c.nr, c.args); got != want {
				t.Errorf("guardProcesses %v: %s = %#x, want %#x", o.guardProcesses, c.name, got, want)
			}
		}
	}
}
