package linux

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// Job control. The command runs in a process group of its own, which
// holds the terminal while fence's does not: a Ctrl-Z stops the command
// and nothing else. So that the user's shell sees the whole run stop,
// pid 1 tells the supervisor over the job socket (a socket pair the
// supervisor makes before it clones the sandbox child), and the
// supervisor takes the terminal back and stops its own process group with
// the same signal, as sudo and su do. When fence is continued (fg, bg,
// SIGCONT), it tells pid 1, which gives the terminal to the command's
// group again when fence holds it, and continues that group.
//
// The messages are syncMsg packets (see sync_linux.go and pid1_linux.go):
//
//	pid 1 -> supervisor: msgJobStopped, Arg the signal, Step 1 if the sandbox held the terminal
//	supervisor -> pid 1: msgJobContinue, Arg 1 if the command is to get the terminal
//	supervisor -> pid 1: msgJobStop, Arg the signal
//
// and, before the command runs, pid 1 may say why it could not start it
// (msgExecFailed, msgPid1Failed), for the supervisor to print.
//
// A Ctrl-Z can reach fence's group rather than the command's: when fence's
// standard input is not the terminal (a pipe, a file), the command does
// not get the terminal, and fence's group stays the foreground. fence then
// catches SIGTSTP and asks pid 1 to stop the command's group with it;
// the command's stop comes back as above, and only then does fence stop,
// so that a job the shell shows stopped has nothing of it running.

// jobPair makes the job socket pair: the sandbox child's end, and the
// supervisor's. Both are close-on-exec.
func jobPair() (child, supervisor *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "job"), os.NewFile(uintptr(fds[1]), "job"), nil
}

// pid 1's side is in pid1_linux.go.

// The supervisor's side.

// supervisorJobs is the supervisor's side of job control: the job socket
// (nil until the sandbox child is ready), fence's controlling terminal, the init
// (nil until it starts), and whether fence's group gave the terminal up to the sandbox.
type supervisorJobs struct {
	sock *os.File
	// tty is fence's controlling terminal, -1 without one; whatever the
	// standard streams are, it is the terminal whose Ctrl-Z and whose
	// foreground the user's shell works with.
	tty int
	// stdinTTY is whether standard input is that terminal, the one the
	// init can give the command's group.
	stdinTTY bool
	init     *os.Process
	// gave is whether the terminal may have passed to the sandbox (fence's
	// group held it, or gave it to the command's), so that fence takes it
	// back at the end from a group with no process left.
	gave atomic.Bool
	// tstp gets the SIGTSTP fence catches, nil where the caller had it
	// ignored.
	tstp     chan os.Signal
	closeTTY func()
	// failed is what pid 1 said when the command did not start.
	failedMu sync.Mutex
	failed   *syncMsg
}

// newSupervisorJobs opens fence's controlling terminal and catches
// SIGTSTP (from here on, so that a Ctrl-Z while the sandbox is built
// stops the command once it runs). Release with close.
func newSupervisorJobs(foreground bool) *supervisorJobs {
	j := &supervisorJobs{tty: -1, closeTTY: func() {}}
	if fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
		j.tty, j.closeTTY = fd, func() { unix.Close(fd) }
	} else {
		for fd := range 3 { // a /dev of its own that lacks tty
			if _, ok := sandbox.TerminalGroup(fd); ok {
				j.tty = fd
				break
			}
		}
	}
	_, j.stdinTTY = sandbox.TerminalGroup(0)
	fg, ok := sandbox.TerminalGroup(j.tty)
	j.gave.Store(foreground || ok && fg == unix.Getpgrp())
	if !signal.Ignored(unix.SIGTSTP) {
		j.tstp = make(chan os.Signal, 1)
		signal.Notify(j.tstp, unix.SIGTSTP)
	}
	return j
}

// close stops catching SIGTSTP and closes the terminal.
func (j *supervisorJobs) close() {
	if j.tstp != nil {
		signal.Stop(j.tstp)
	}
	j.closeTTY()
}

// follow follows the command's stops and fence's stops and continues on
// the job socket, until done is closed, and then closes the socket (the
// init has ended by then). The returned channel is closed once it has
// stopped.
func (j *supervisorJobs) follow(done <-chan struct{}) <-chan struct{} {
	ended := make(chan struct{})
	if j.sock == nil {
		close(ended)
		return ended
	}
	stops, read := make(chan [2]byte), make(chan struct{})
	go func() {
		defer close(read)
		j.readStops(stops, done)
	}()
	conts := make(chan os.Signal, 1)
	signal.Notify(conts, unix.SIGCONT)
	go func() {
		defer close(ended)
		defer j.sock.Close()
		defer func() { <-read }()
		defer signal.Stop(conts)
		for {
			select {
			case m := <-stops:
				j.onStop(unix.Signal(m[0]), m[1] == 1)
			case s := <-j.tstp:
				j.send(msgJobStop, uint32(s.(unix.Signal)))
			case <-conts:
				j.onContinue()
			case <-done:
				return
			}
		}
	}()
	return ended
}

// readStops passes on each stop pid 1 reports, as the signal and
// whether the sandbox held the terminal, and keeps why the command did
// not start, when pid 1 says so. It reads until pid 1 is gone.
func (j *supervisorJobs) readStops(out chan<- [2]byte, done <-chan struct{}) {
	for {
		m, files, ok := readSync(int(j.sock.Fd()), 0)
		closeFiles(files)
		if !ok {
			return
		}
		switch m.Kind {
		case msgExecFailed, msgPid1Failed:
			j.failedMu.Lock()
			j.failed = &m
			j.failedMu.Unlock()
			continue
		case msgJobStopped:
		default:
			continue
		}
		select {
		case out <- [2]byte{byte(m.Arg), byte(m.Step)}:
		case <-done:
		}
	}
}

// startFailure is what pid 1 said when it could not start the command;
// ok is false when it did not. Ask once follow has ended.
func (j *supervisorJobs) startFailure() (m syncMsg, ok bool) {
	j.failedMu.Lock()
	defer j.failedMu.Unlock()
	if j.failed == nil {
		return syncMsg{}, false
	}
	return *j.failed, true
}

// onStop answers a stop of the command. A stop for terminal access
// (SIGTTIN, SIGTTOU) while the run is in the foreground is answered with
// the terminal, as the command's group is the one to have it, when the
// init can give it (it is the command's standard input). Otherwise fence
// takes the terminal back, if the sandbox held it (so that Ctrl-C reaches
// fence, which ends the stopped command), and stops its own process group
// with the signal, for the shell to see the job stop. A SIGSTOP becomes
// SIGTSTP; where no job control could continue fence (an orphaned process
// group) or without a terminal, fence does not stop at all, and leaves
// the command stopped, for SIGCONT or a terminating signal to fence to
// end.
func (j *supervisorJobs) onStop(sig unix.Signal, held bool) {
	fg, tty := sandbox.TerminalGroup(j.tty)
	ours := fg == unix.Getpgrp()
	if (sig == unix.SIGTTIN || sig == unix.SIGTTOU) && (held || ours && j.stdinTTY) {
		j.sendContinue(true)
		return
	}
	if held {
		sandbox.GiveTerminal(j.tty, unix.Getpgrp())
	}
	if !tty {
		return
	}
	if sig != unix.SIGTTIN && sig != unix.SIGTTOU {
		sig = unix.SIGTSTP
	}
	stopOwnGroup(sig)
}

// stopOwnGroup stops fence's process group, as the terminal's stop would:
// the other members with sig, fence itself with SIGSTOP (fence catches
// SIGTSTP, and the Go runtime keeps its handler for good once it has).
// A group no shell could continue (an orphaned one, where the kernel
// discards SIGTSTP, SIGTTIN and SIGTTOU) is not stopped.
func stopOwnGroup(sig unix.Signal) {
	self := os.Getpid()
	members, orphaned := ownGroup()
	if orphaned {
		return
	}
	for _, pid := range members {
		if pid != self {
			unix.Kill(pid, sig)
		}
	}
	unix.Kill(self, unix.SIGSTOP)
}

// ownGroup lists the members of fence's process group that /proc shows,
// and whether the group is orphaned: no member has a parent in another
// group of the same session, which a shell's job control works from. A
// group whose members' parents /proc does not show counts as orphaned.
func ownGroup() (members []int, orphaned bool) {
	pgrp, sid := unix.Getpgrp(), 0
	if s, err := unix.Getsid(0); err == nil {
		sid = s
	}
	procs := map[int]procIDs{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if ids, ok := readProcIDs(pid); ok {
				procs[pid] = ids
			}
		}
	}
	orphaned = true
	for pid, ids := range procs {
		if ids.pgrp != pgrp {
			continue
		}
		members = append(members, pid)
		if parent, ok := procs[ids.ppid]; ok && parent.pgrp != pgrp && parent.sid == sid {
			orphaned = false
		}
	}
	return members, orphaned
}

// procIDs are a process's parent, process group and session.
type procIDs struct{ ppid, pgrp, sid int }

// readProcIDs reads pid's parent, group and session from /proc/PID/stat,
// whose second field (the command name, in parentheses) may hold spaces
// and parentheses.
func readProcIDs(pid int) (procIDs, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procIDs{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procIDs{}, false
	}
	var state string
	var ids procIDs
	if n, _ := fmt.Sscanf(string(b[i+1:]), " %s %d %d %d", &state, &ids.ppid, &ids.pgrp, &ids.sid); n != 4 {
		return procIDs{}, false
	}
	return ids, true
}

// onContinue answers fence being continued: the init is continued too
// (only a command of the Landlock-only engine, which shares its uid and
// has no pid namespace between them, could have stopped it), and asked to
// continue the command, with the terminal when fence's group has it.
func (j *supervisorJobs) onContinue() {
	j.init.Signal(unix.SIGCONT)
	fg, _ := sandbox.TerminalGroup(j.tty)
	j.sendContinue(fg == unix.Getpgrp() && j.stdinTTY)
}

func (j *supervisorJobs) sendContinue(withTerminal bool) {
	arg := uint32(0)
	if withTerminal {
		arg = 1
		j.gave.Store(true)
	}
	j.send(msgJobContinue, arg)
}

func (j *supervisorJobs) send(kind, arg uint32) {
	sendSync(j.sock, syncMsg{Kind: kind, Arg: arg})
}

// reclaim makes fence's process group the terminal's foreground again
// after the sandbox may have held it: when the group holding it has no
// process left (the sandbox's, ended), not when the user's shell or
// another job has it.
func (j *supervisorJobs) reclaim() {
	if !j.gave.Load() {
		return
	}
	fg, ok := sandbox.TerminalGroup(j.tty)
	if !ok || fg == unix.Getpgrp() {
		return
	}
	if err := unix.Kill(-fg, 0); errors.Is(err, unix.ESRCH) {
		sandbox.GiveTerminal(j.tty, unix.Getpgrp())
	}
}
