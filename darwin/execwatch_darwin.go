package darwin

import (
	"bytes"
	"errors"

	"golang.org/x/sys/unix"
)

// execWatch tells whether sandbox-exec executed the command, so that its
// own failure (a profile it rejects, a command it cannot execute) is told
// apart from the command's exit status. fence watches the process with a
// kqueue (EVFILT_PROC, NOTE_EXEC) from just after it started: fence's
// start of sandbox-exec has executed by then (os.StartProcess returns
// after it), so an exec the kqueue reports is sandbox-exec's of the
// command. What could happen before the watch began is read from the
// process's name and program path once it is watched (see execSight).
type execWatch struct {
	kq    int // -1 when not watching
	sight execSight
}

// watchExec starts watching pid, the process sandbox-exec runs as.
func watchExec(pid int) *execWatch {
	w := &execWatch{kq: watchProcess(pid)}
	_, comm, zombie, read := processInfo(pid)
	w.sight = execSight{read: read, comm: comm, path: execPath(pid), zombie: zombie, watched: w.kq >= 0}
	return w
}

// execPath is the path pid's last exec was given (the start of sysctl
// kern.procargs2, after argc), or "" when it cannot be read (a zombie's).
// It is read from the process's own stack, which the process may have
// rewritten: a command named sandbox-exec, executed before the watch
// began, can make it read /usr/bin/sandbox-exec and its status pass for
// sandbox-exec's (exit 125). Only the reported status changes; the
// kernel's own path (proc_pidpath) would not be steered.
func execPath(pid int) string {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(b) < 5 {
		return ""
	}
	b = b[4:]
	if i := bytes.IndexByte(b, 0); i > 0 {
		return string(b[:i])
	}
	return ""
}

// watchProcess is a kqueue that reports pid's exec and exit, or -1.
func watchProcess(pid int) int {
	kq, err := unix.Kqueue()
	if err != nil {
		return -1
	}
	unix.CloseOnExec(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_CLEAR)
	ev.Fflags = unix.NOTE_EXEC | unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		return -1
	}
	return kq
}

// execd reports, once the process has ended and been reaped, whether it
// executed the command: the kqueue holds the exec's note by then (it is
// posted at the exec, before the exit).
func (w *execWatch) execd() bool {
	if w.kq >= 0 {
		w.sight.noted = noted(w.kq)
		unix.Close(w.kq)
	}
	return w.sight.execd()
}

// noted reports whether the kqueue reported an exec, or failed to answer.
func noted(kq int) bool {
	events := make([]unix.Kevent_t, 4)
	for {
		n, err := unix.Kevent(kq, nil, events, &unix.Timespec{})
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return true
		}
		for _, e := range events[:n] {
			if e.Fflags&unix.NOTE_EXEC != 0 {
				return true
			}
		}
		return false
	}
}
