package linux

import (
	"errors"
	"os"
	"os/signal"
	"sync/atomic"

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

const (
	jobStopped  = 'S'
	jobContinue = 'C'
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

// terminalGroup is the foreground process group of fence's terminal (its
// standard input), as this process's pid namespace numbers it: 0 for a
// group outside it. ok is false without a controlling terminal there.
func terminalGroup() (pgrp int, ok bool) {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return pgrp, err == nil
}

// giveTerminal makes pgrp the foreground group of the terminal on
// standard input, from a process that may be in the background.
func giveTerminal(pgrp int) {
	signal.Ignore(unix.SIGTTOU)
	defer signal.Reset(unix.SIGTTOU)
	unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgrp)
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
	fg, ok := terminalGroup()
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

// readContinues passes on each continue request of the supervisor (true:
// with the terminal) until the socket closes.
func (j *commandJobs) readContinues(out chan<- bool) {
	buf := make([]byte, 2)
	for {
		n, _, _, _, err := unix.Recvmsg(int(j.sock.Fd()), buf, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		if n == 2 && buf[0] == jobContinue {
			out <- buf[1] == 1
		}
	}
}

// resume gives the command's group the terminal, when withTerminal and no
// group of the sandbox has it, and continues the group.
func (j *commandJobs) resume(withTerminal bool) {
	if withTerminal && !j.sandboxHoldsTerminal() {
		giveTerminal(j.pgrp)
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

// followJobs follows the command's stops and fence's continues on the
// job socket, until done is closed, and then closes the socket (the init
// has ended by then). gave records whether the command's group was given
// the terminal, so that fence takes it back at the end. The returned
// channel is closed once it has stopped.
func followJobs(sock *os.File, done <-chan struct{}, gave *atomic.Bool) <-chan struct{} {
	ended := make(chan struct{})
	if sock == nil {
		close(ended)
		return ended
	}
	stops, read := make(chan [2]byte), make(chan struct{})
	go func() {
		defer close(read)
		readStops(sock, stops, done)
	}()
	conts := make(chan os.Signal, 1)
	signal.Notify(conts, unix.SIGCONT)
	go func() {
		defer close(ended)
		defer sock.Close()
		defer func() { <-read }()
		defer signal.Stop(conts)
		for {
			select {
			case m := <-stops:
				onStop(sock, unix.Signal(m[0]), m[1] == 1, gave)
			case <-conts:
				fg, _ := terminalGroup()
				sendContinue(sock, fg == unix.Getpgrp(), gave)
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
// the terminal, as the command's group is the one to have it. Otherwise
// fence takes the terminal back, if the sandbox held it (so that Ctrl-C
// reaches fence, which ends the stopped command), and stops its own
// process group with the signal, for the shell to see the job stop. A
// SIGSTOP becomes SIGTSTP, which the kernel discards where no job control
// could continue fence (an orphaned process group); without a terminal
// fence does not stop at all, and leaves the command stopped, for SIGCONT
// or a terminating signal to fence to end.
func onStop(sock *os.File, sig unix.Signal, held bool, gave *atomic.Bool) {
	fg, tty := terminalGroup()
	ours := fg == unix.Getpgrp()
	if (sig == unix.SIGTTIN || sig == unix.SIGTTOU) && (held || ours) {
		sendContinue(sock, true, gave)
		return
	}
	if held {
		giveTerminal(unix.Getpgrp())
	}
	if !tty {
		return
	}
	if sig != unix.SIGTTIN && sig != unix.SIGTTOU {
		sig = unix.SIGTSTP
	}
	unix.Kill(-unix.Getpgrp(), sig)
}

func sendContinue(sock *os.File, withTerminal bool, gave *atomic.Bool) {
	b := byte(0)
	if withTerminal {
		b = 1
		gave.Store(true)
	}
	unix.Sendmsg(int(sock.Fd()), []byte{jobContinue, b}, nil, nil, unix.MSG_NOSIGNAL)
}

// reclaimTerminal makes fence's process group the terminal's foreground
// again after the command's job owned it: when the group holding it has
// no process left (the sandbox's, ended), not when the user's shell or
// another job has it.
func reclaimTerminal() {
	fg, ok := terminalGroup()
	if !ok || fg == unix.Getpgrp() {
		return
	}
	if err := unix.Kill(-fg, 0); errors.Is(err, unix.ESRCH) {
		giveTerminal(unix.Getpgrp())
	}
}
