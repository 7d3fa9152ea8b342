package linux

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Without a pid namespace nothing ends the processes a command leaves
// running when it exits: a daemon would outlive the run (and its
// timeout), and could plant files after fence moved the planted ones
// aside. The Landlock-only engine makes the supervisor a child
// subreaper, so that every orphan of the sandbox becomes its child
// (none can leave the tree: it would need another subreaper, and Landlock
// keeps the sandbox's signals and ptrace inside it), and kills them all
// before Run returns.

// becomeSubreaper makes this process the reaper of its descendants'
// orphans, and returns the children it already has, which are not the
// sandbox's, and a function that ends the role.
func becomeSubreaper() (before map[int]bool, undo func(), err error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, nil, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	before = map[int]bool{}
	for _, pid := range directChildren() {
		before[pid] = true
	}
	return before, func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }, nil
}

// killBudget bounds how long fence keeps killing descendants that fork
// faster than they die, or that do not die (a process stuck in the
// kernel).
const killBudget = 5 * time.Second

// killDescendants sends SIGKILL to every descendant of this process but
// the children in keep (and theirs), reaps those that become its
// children, and repeats until none is left or killBudget has passed. It
// returns the descendants still there.
func killDescendants(keep map[int]bool) []int {
	deadline := time.Now().Add(killBudget)
	for {
		// Every descendant is below a child: with none, there is nothing
		// to scan /proc for.
		if !slices.ContainsFunc(directChildren(), func(pid int) bool { return !keep[pid] }) {
			return nil
		}
		tree := descendants(os.Getpid(), keep)
		seen := map[int]bool{}
		for _, pid := range tree {
			seen[pid] = true
		}
		for _, pid := range tree {
			killVerified(pid, seen)
		}
		reaped := reapChildren(keep)
		if time.Now().After(deadline) {
			return descendants(os.Getpid(), keep)
		}
		if !reaped {
			time.Sleep(time.Millisecond) // SIGKILL takes effect on the way out of the kernel
		}
	}
}

// descendants lists the processes below self, parents before children,
// leaving out the children in keep and what is below them.
func descendants(self int, keep map[int]bool) []int {
	children := map[int][]int{}
	for pid, ppid := range processParents() {
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{self}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if p == self && keep[c] {
				continue
			}
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// killVerified sends SIGKILL to pid if it is still the process the tree
// saw: its pidfd pins it, and its parent, read after, must be this
// process or in tree. A signal through the pidfd then reaches a process
// that was not yet reaped, so the parent read was its own.
func killVerified(pid int, tree map[int]bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ppid, ok := parentOf(pid)
	if !ok || ppid != os.Getpid() && !tree[ppid] {
		return
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// reapChildren reaps this process's children that have ended, but those
// in keep, and reports whether it reaped any.
func reapChildren(keep map[int]bool) bool {
	reaped := false
	self := os.Getpid()
	for pid, ppid := range processParents() {
		if ppid != self || keep[pid] {
			continue
		}
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
			reaped = true
		}
	}
	return reaped
}

// directChildren lists this process's children (zombies among them)
// from /proc/self/task/*/children, or, where the kernel lacks those
// files, by scanning /proc.
func directChildren() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			tasks = nil
			break
		}
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	if len(tasks) > 0 {
		return pids
	}
	pids = nil
	self := os.Getpid()
	for pid, ppid := range processParents() {
		if ppid == self {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processParents maps every process /proc shows to its parent.
func processParents() map[int]int {
	parents := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			parents[pid] = ppid
		}
	}
	return parents
}

// parentOf reads pid's parent from /proc/PID/stat, whose second field
// (the command name, in parentheses) may hold spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
