package linux

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Job control. The command runs in a process group of its own, which
// holds the terminal while fence's does not: a Ctrl-Z stops the command
// and nothing else. So that the user's shell sees the whole run stop, the
// init tells the supervisor over the job socket (a socket pair the init
// makes and sends with its status), and the supervisor takes the terminal
// back and stops its own process group with the same signal, as sudo and
// su do. When fence is continued (fg, bg, SIGCONT), it tells the init,
// which gives the terminal to the command's group again when fence holds
// it, and continues that group.
//
// The messages, one a packet:
//
//	init -> supervisor: jobStopped, the signal, 1 if the sandbox held the terminal
//	supervisor -> init: jobContinue, 1 if the command is to get the terminal
//	supervisor -> init: jobStop, the signal
//
// A Ctrl-Z can reach fence's group rather than the command's: when fence's
// standard input is not the terminal (a pipe, a file), the command does
// not get the terminal, and fence's group stays the foreground. fence then
// catches SIGTSTP and asks the init to stop the command's group with it;
// the command's stop comes back as above, and only then does fence stop,
// so that a job the shell shows stopped has nothing of it running.

const (
	jobStopped  = 'S'
	jobContinue = 'C'
	jobStop     = 'T'
)

// jobPair makes the job socket pair: the init's end, and the one it sends
// the supervisor.
func jobPair() (init, supervisor *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "job"), os.NewFile(uintptr(fds[1]), "job"), nil
}

// terminalGroup is the foreground process group of the terminal fd is,
// as this process's pid namespace numbers it: 0 for a group outside it.
// ok is false when fd is not this process's controlling terminal.
func terminalGroup(fd int) (pgrp int, ok bool) {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return pgrp, err == nil
}

// giveTerminal makes pgrp the foreground group of the terminal fd is,
// from a process that may be in the background.
func giveTerminal(fd, pgrp int) {
	signal.Ignore(unix.SIGTTOU)
	defer signal.Reset(unix.SIGTTOU)
	unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, pgrp)
}

// The init's side.

// commandJobs is the init's view of the command's job: its process group
// (the command's pid), whether a stop was reported that the supervisor
// has not answered, and the socket to the supervisor.
type commandJobs struct {
	pgrp       int
	namespaces bool
	sock       *os.File
	reported   bool
}

// sandboxHoldsTerminal reports whether a process group of the sandbox is
// the terminal's foreground. In a pid namespace any group the init can
// name is the sandbox's; without one, the command's group and those its
// descendants lead.
func (j *commandJobs) sandboxHoldsTerminal() bool {
	fg, ok := terminalGroup(0)
	if !ok || fg <= 0 {
		return false
	}
	if j.namespaces || fg == j.pgrp {
		return true
	}
	for p, hops := fg, 0; p > 1 && hops < 64; hops++ {
		ppid, ok := parentOf(p)
		if !ok {
			return false
		}
		if ppid == os.Getpid() {
			return true
		}
		p = ppid
	}
	return false
}

// reportStop tells the supervisor that the command stopped with sig,
// unless an earlier stop is still unanswered: a command that stops over
// and over (continued by a child of its own) cannot queue more stops than
// one, which would stop fence again each time it is continued, nor fill
// the socket while fence is stopped and block the init.
func (j *commandJobs) reportStop(sig unix.Signal) {
	if j.reported {
		return
	}
	j.reported = true
	held := byte(0)
	if j.sandboxHoldsTerminal() {
		held = 1
	}
	unix.Sendmsg(int(j.sock.Fd()), []byte{jobStopped, byte(sig), held}, nil, nil, unix.MSG_NOSIGNAL)
}

// jobRequest is a message of the supervisor to the init: jobContinue
// (arg 1: with the terminal) or jobStop (arg: the signal).
type jobRequest struct{ kind, arg byte }

// readRequests passes on each request of the supervisor until the socket
// closes.
func (j *commandJobs) readRequests(out chan<- jobRequest) {
	buf := make([]byte, 2)
	for {
		n, _, _, _, err := unix.Recvmsg(int(j.sock.Fd()), buf, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		if n == 2 && (buf[0] == jobContinue || buf[0] == jobStop) {
			out <- jobRequest{buf[0], buf[1]}
		}
	}
}

// answer does what the supervisor asked: stops the command's group with
// the signal fence got (a Ctrl-Z that reached fence's group, not the
// command's), or continues it.
func (j *commandJobs) answer(r jobRequest) {
	if r.kind == jobStop {
		unix.Kill(-j.pgrp, unix.Signal(r.arg))
		return
	}
	j.resume(r.arg == 1)
}

// resume gives the command's group the terminal, when withTerminal and no
// group of the sandbox has it, and continues the group.
func (j *commandJobs) resume(withTerminal bool) {
	if withTerminal && !j.sandboxHoldsTerminal() {
		giveTerminal(0, j.pgrp)
	}
	j.reported = false
	unix.Kill(-j.pgrp, unix.SIGCONT)
}

// forward passes a signal fence got on to the command. One that ends
// processes is followed by SIGCONT to the command's group, so that it
// takes effect on a stopped command, and on a group whose stopped member
// holds up the command itself (a shell between vfork and exec when the
// stop came, with its signals blocked until the child goes on).
func (j *commandJobs) forward(p *os.Process, s os.Signal) {
	p.Signal(s)
	if s != unix.SIGUSR1 && s != unix.SIGUSR2 {
		j.reported = false
		unix.Kill(-j.pgrp, unix.SIGCONT)
	}
}

// The supervisor's side.

// supervisorJobs is the supervisor's side of job control: the job socket
// (nil until the init sends it), fence's controlling terminal, the init
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
			if _, ok := terminalGroup(fd); ok {
				j.tty = fd
				break
			}
		}
	}
	_, j.stdinTTY = terminalGroup(0)
	fg, ok := terminalGroup(j.tty)
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
		readStops(j.sock, stops, done)
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
				j.send(jobStop, byte(s.(unix.Signal)))
			case <-conts:
				j.onContinue()
			case <-done:
				return
			}
		}
	}()
	return ended
}

// readStops passes on each stop the init reports, as the signal and
// whether the sandbox held the terminal.
func readStops(sock *os.File, out chan<- [2]byte, done <-chan struct{}) {
	buf := make([]byte, 3)
	for {
		n, _, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		if n != 3 || buf[0] != jobStopped {
			continue
		}
		select {
		case out <- [2]byte{buf[1], buf[2]}:
		case <-done:
			return
		}
	}
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
	fg, tty := terminalGroup(j.tty)
	ours := fg == unix.Getpgrp()
	if (sig == unix.SIGTTIN || sig == unix.SIGTTOU) && (held || ours && j.stdinTTY) {
		j.sendContinue(true)
		return
	}
	if held {
		giveTerminal(j.tty, unix.Getpgrp())
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
	fg, _ := terminalGroup(j.tty)
	j.sendContinue(fg == unix.Getpgrp() && j.stdinTTY)
}

func (j *supervisorJobs) sendContinue(withTerminal bool) {
	b := byte(0)
	if withTerminal {
		b = 1
		j.gave.Store(true)
	}
	j.send(jobContinue, b)
}

func (j *supervisorJobs) send(kind, arg byte) {
	unix.Sendmsg(int(j.sock.Fd()), []byte{kind, arg}, nil, nil, unix.MSG_NOSIGNAL)
}

// reclaim makes fence's process group the terminal's foreground again
// after the sandbox may have held it: when the group holding it has no
// process left (the sandbox's, ended), not when the user's shell or
// another job has it.
func (j *supervisorJobs) reclaim() {
	if !j.gave.Load() {
		return
	}
	fg, ok := terminalGroup(j.tty)
	if !ok || fg == unix.Getpgrp() {
		return
	}
	if err := unix.Kill(-fg, 0); errors.Is(err, unix.ESRCH) {
		giveTerminal(j.tty, unix.Getpgrp())
	}
}

// commandSession is how the init starts the command: in a process group
// of its own, which takes the terminal when foreground; or, with
// newSession (forceNewSession), in a session of its own, which has no
// controlling terminal (setsid), so that the command cannot reach the
// terminal through /dev/tty nor be its foreground job. There is no job
// control then: fence's group keeps the terminal, so Ctrl-Z and Ctrl-C
// reach fence, which passes them on; a SIGINT ends the command, but the
// kernel discards a SIGTSTP sent to the command's group, which no
// process of its session parents (an orphaned group), and the run goes
// on. A shell in the command has no job control either.
func commandSession(newSession, foreground bool) *syscall.SysProcAttr {
	if newSession {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Foreground: foreground, Ctty: 0}
}
