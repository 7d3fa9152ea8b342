package darwin

import "syscall"

// Signals and job control, as the Linux engine has them (see
// linux/jobcontrol_linux.go), with fence itself in the init's place:
// sandbox-exec executes the command in its own process, fence's child.
//
// The command runs in a process group of its own. When fence's group is
// the terminal's foreground and standard input is the terminal, the
// command's group takes the terminal, and what the terminal sends (Ctrl-C,
// Ctrl-\, Ctrl-Z, a resize) reaches the command alone, once. Otherwise
// fence's group keeps it, the terminal's signals reach fence, and fence
// passes them on to the command's group. Either way each signal has one
// path to the command.
//
// A Ctrl-Z stops the command's group. fence sees the stop (wait4 with
// WUNTRACED), takes the terminal back and stops its own process group
// with the same signal, so that the user's shell sees the whole run stop.
// When fence is continued (fg, bg, SIGCONT), it gives the terminal to the
// command's group again when its own group has it, and continues the
// command's group. A Ctrl-Z that reaches fence's group (fence kept the
// terminal) is passed on as a stop of the command's group, whose stop
// then stops fence, so that a job the shell shows stopped has nothing of
// it running.

// forwarded are the signals fence catches and passes on to the command.
var forwarded = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// forward is how fence passes on a signal it caught.
type forward struct {
	// group sends it to the command's process group, not the command alone.
	group bool
	// cont follows it with SIGCONT to the command's group, so that it
	// takes effect on a stopped command.
	cont bool
}

// forwarding says how fence passes on sig. What a terminal sends its
// foreground group (Ctrl-C, Ctrl-\, a resize) reaches fence only when
// fence's group kept the terminal, and goes on to the command's whole
// group, as the terminal would have sent it; the rest (a kill of fence)
// goes to the command, as it would to a command fence did not sandbox.
// One that ends processes is followed by SIGCONT.
func forwarding(sig syscall.Signal, fenceHoldsTerminal bool) forward {
	switch sig {
	case syscall.SIGWINCH:
		return forward{group: true}
	case syscall.SIGINT, syscall.SIGQUIT:
		return forward{group: fenceHoldsTerminal, cont: true}
	case syscall.SIGUSR1, syscall.SIGUSR2:
		return forward{}
	}
	return forward{cont: true}
}

// stopAnswer is what fence does when the command stops.
type stopAnswer int

const (
	// resume gives the command's group the terminal and continues it: it
	// stopped for terminal access (SIGTTIN, SIGTTOU) it is to have.
	resume stopAnswer = iota
	// stopRun stops fence's own group, for the user's shell to see the
	// run stop (after fence took the terminal back, when the sandbox
	// held it).
	stopRun
	// stayStopped leaves the command stopped: without a terminal no job
	// control would continue fence, so fence does not stop; a SIGCONT or
	// a terminating signal to fence ends the stop.
	stayStopped
)

// answerStop decides what fence does when the command stopped with sig:
// held is whether a group of the sandbox held the terminal, fenceFG
// whether fence's group holds it, stdinTTY whether standard input is that
// terminal (the one the command's group can be given), and haveTTY
// whether fence has a terminal at all. It returns the signal to stop
// fence's group with: a SIGSTOP becomes SIGTSTP.
func answerStop(sig syscall.Signal, held, fenceFG, stdinTTY, haveTTY bool) (stopAnswer, syscall.Signal) {
	ttyAccess := sig == syscall.SIGTTIN || sig == syscall.SIGTTOU
	switch {
	case ttyAccess && (held || fenceFG && stdinTTY):
		return resume, 0
	case !haveTTY:
		return stayStopped, 0
	case ttyAccess:
		return stopRun, sig
	}
	return stopRun, syscall.SIGTSTP
}

// procIDs are a process's id, parent, process group and session.
type procIDs struct{ pid, ppid, pgrp, sid int }

// orphaned reports whether the group whose members are given is orphaned:
// no member has a parent in another group of the same session, which a
// shell's job control works from. The kernel discards a terminal stop
// sent to such a group, and nothing would continue it, so fence does not
// stop it. A member whose parent is not known counts as no such parent.
func orphaned(members []procIDs, parents map[int]procIDs, sid int) bool {
	for _, m := range members {
		if p, ok := parents[m.ppid]; ok && p.pgrp != m.pgrp && p.sid == sid {
			return false
		}
	}
	return true
}

// sandboxHolds reports whether the terminal's foreground group fg is the
// sandbox's: the command's group, or one that a descendant of the command
// leads. parentOf gives a process's parent; the walk stops at a process
// it does not know, and after 64 steps.
func sandboxHolds(fg, cmdPgrp, cmdPid int, parentOf func(int) (int, bool)) bool {
	if fg <= 0 {
		return false
	}
	if fg == cmdPgrp {
		return true
	}
	for p, hops := fg, 0; p > 1 && hops < 64; hops++ {
		if p == cmdPid {
			return true
		}
		ppid, ok := parentOf(p)
		if !ok {
			return false
		}
		p = ppid
	}
	return false
}
