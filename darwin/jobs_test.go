package darwin

import (
	"slices"
	"syscall"
	"testing"
)

func TestForwarding(t *testing.T) {
	tests := []struct {
		sig         syscall.Signal
		fenceHolds  bool
		group, cont bool
	}{
		// fence holds the terminal: what it sends goes to the command's
		// group, which did not get it.
		{syscall.SIGINT, true, true, true},
		{syscall.SIGQUIT, true, true, true},
		{syscall.SIGWINCH, true, true, false},
		// The command's group holds it and got the terminal's own: what
		// reaches fence is a kill of fence, for the command.
		{syscall.SIGINT, false, false, true},
		{syscall.SIGQUIT, false, false, true},
		{syscall.SIGWINCH, false, true, false},
		{syscall.SIGTERM, true, false, true},
		{syscall.SIGTERM, false, false, true},
		{syscall.SIGHUP, false, false, true},
		{syscall.SIGUSR1, true, false, false},
		{syscall.SIGUSR2, false, false, false},
	}
	for _, tt := range tests {
		got := forwarding(tt.sig, tt.fenceHolds)
		if want := (forward{group: tt.group, cont: tt.cont}); got != want {
			t.Errorf("forwarding(%v, fence holds the terminal %v) = %+v, want %+v", tt.sig, tt.fenceHolds, got, want)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH} {
		if !slices.Contains(forwarded, sig) {
			t.Errorf("forwarded lacks %v", sig)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGTSTP, syscall.SIGCONT, syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCHLD} {
		if slices.Contains(forwarded, sig) {
			t.Errorf("forwarded holds %v, which fence handles itself or cannot catch", sig)
		}
	}
}

func TestAnswerStop(t *testing.T) {
	tests := []struct {
		name                             string
		sig                              syscall.Signal
		held, fenceFG, stdinTTY, haveTTY bool
		want                             stopAnswer
		groupSig                         syscall.Signal
	}{
		{"Ctrl-Z while the command holds the terminal", syscall.SIGTSTP, true, false, true, true, stopRun, syscall.SIGTSTP},
		{"Ctrl-Z passed on by fence", syscall.SIGTSTP, false, true, false, true, stopRun, syscall.SIGTSTP},
		{"SIGSTOP stops the run as a Ctrl-Z", syscall.SIGSTOP, true, false, true, true, stopRun, syscall.SIGTSTP},
		{"read of the terminal it holds", syscall.SIGTTIN, true, false, true, true, resume, 0},
		{"read of the terminal fence's group holds", syscall.SIGTTIN, false, true, true, true, resume, 0},
		{"write to the terminal fence's group holds", syscall.SIGTTOU, false, true, true, true, resume, 0},
		{"read of a terminal that is not its input", syscall.SIGTTIN, false, true, false, true, stopRun, syscall.SIGTTIN},
		{"read while the run is in the background", syscall.SIGTTIN, false, false, true, true, stopRun, syscall.SIGTTIN},
		{"write while the run is in the background", syscall.SIGTTOU, false, false, true, true, stopRun, syscall.SIGTTOU},
		{"no terminal", syscall.SIGTSTP, false, false, false, false, stayStopped, 0},
		{"no terminal, SIGSTOP", syscall.SIGSTOP, false, false, false, false, stayStopped, 0},
	}
	for _, tt := range tests {
		got, sig := answerStop(tt.sig, tt.held, tt.fenceFG, tt.stdinTTY, tt.haveTTY)
		if got != tt.want || sig != tt.groupSig {
			t.Errorf("%s: answerStop(%v, held %v, fence's group %v, stdin %v, tty %v) = %v, %v; want %v, %v", tt.name, tt.sig, tt.held, tt.fenceFG, tt.stdinTTY, tt.haveTTY, got, sig, tt.want, tt.groupSig)
		}
	}
}

func TestOrphaned(t *testing.T) {
	// fence (100) in group 100 of session 1, started by a shell (50,
	// group 50), with less (101) beside it in its group.
	shell := procIDs{pid: 50, ppid: 1, pgrp: 50, sid: 1}
	fence := procIDs{pid: 100, ppid: 50, pgrp: 100, sid: 1}
	less := procIDs{pid: 101, ppid: 50, pgrp: 100, sid: 1}
	tests := []struct {
		name    string
		members []procIDs
		parents map[int]procIDs
		want    bool
	}{
		{"a shell's job", []procIDs{fence, less}, map[int]procIDs{50: shell}, false},
		{"parent in the same group", []procIDs{{pid: 100, ppid: 99, pgrp: 100}}, map[int]procIDs{99: {pid: 99, pgrp: 100, sid: 1}}, true},
		{"parent in another session", []procIDs{fence}, map[int]procIDs{50: {pid: 50, pgrp: 50, sid: 2}}, true},
		{"parent unknown", []procIDs{fence}, nil, true},
		{"one member of several with a parent outside", []procIDs{{pid: 102, ppid: 100, pgrp: 100, sid: 1}, less}, map[int]procIDs{100: fence, 50: shell}, false},
		{"no members", nil, nil, true},
	}
	for _, tt := range tests {
		if got := orphaned(tt.members, tt.parents, 1); got != tt.want {
			t.Errorf("%s: orphaned() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSandboxHolds(t *testing.T) {
	// The command is 200 (group 200), fence's child; 210 is its child,
	// 220 its grandchild, each leading a group of its own (a shell's
	// jobs inside the command); 300 is another process of the user's.
	parents := map[int]int{200: 100, 210: 200, 220: 210, 300: 50, 100: 50, 50: 1}
	parentOf := func(p int) (int, bool) { pp, ok := parents[p]; return pp, ok }
	tests := []struct {
		fg   int
		want bool
	}{
		{200, true},
		{210, true},
		{220, true},
		{100, false}, // fence's own group
		{300, false},
		{50, false},
		{999, false}, // a group whose leader is unknown
		{0, false},
		{-1, false},
	}
	for _, tt := range tests {
		if got := sandboxHolds(tt.fg, 200, 200, parentOf); got != tt.want {
			t.Errorf("sandboxHolds(%d) = %v, want %v", tt.fg, got, tt.want)
		}
	}
	loop := func(p int) (int, bool) { return p + 1, true } // never reaches the command
	if sandboxHolds(201, 200, 200, loop) {
		t.Errorf("sandboxHolds on an endless chain = true, want false")
	}
}
