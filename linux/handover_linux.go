package linux

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// startedChild is a sandbox child that runs its program: the supervisor
// serves it once it reports (report).
type startedChild struct {
	proc *os.Process
	// sync is the supervisor's end of the sync socket, jobs of the job
	// socket.
	sync, jobs *os.File
	prog       *program
	pid1       *pid1Prog
	// release lets the thread that cloned the child go: the kernel sends
	// the child SIGKILL (its parent-death signal) when that thread ends,
	// so it stays until the sandbox is over.
	release func()
}

// startChild lowers w into a sandbox program and clones the child that
// runs it, on a thread of its own that stays until release. It returns
// errNoUserNS (wrapped) when the clone of the namespaces is refused.
func startChild(w *wire) (*startedChild, error) {
	syncSup, syncChild, err := seqpacketPair("sync socket")
	if err != nil {
		return nil, err
	}
	jobsChild, jobsSup, err := jobPair()
	if err != nil {
		syncSup.Close()
		syncChild.Close()
		return nil, fmt.Errorf("socketpair for job control: %w", err)
	}
	s := &startedChild{sync: syncSup, jobs: jobsSup, release: func() {}}
	fds := childFDs{sync: int32(syncChild.Fd()), jobs: int32(jobsChild.Fd())}
	err = s.start(w, fds)
	syncChild.Close()
	jobsChild.Close()
	if err != nil {
		s.release()
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *startedChild) start(w *wire, fds childFDs) error {
	prog, ruleset, err := lowerPlan(w, fds)
	if err != nil {
		return err
	}
	defer unixClose(ruleset)
	if testOnlyLowered != nil {
		testOnlyLowered(prog)
	}
	pid1, err := newPid1Prog(w.Plan, w.Env, w.Namespaces, w.Foreground, w.NoListener)
	if err != nil {
		return err
	}
	s.prog, s.pid1 = prog, pid1
	flags := uintptr(0)
	if w.Namespaces {
		flags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
		if w.Plan.Network == "none" {
			flags |= unix.CLONE_NEWNET
		}
	}
	c := prog.childProg(fds, flags, pid1)
	pid, errno := s.clone(c)
	runtime.KeepAlive(c)
	if errno != 0 {
		err := fmt.Errorf("start the sandbox child: clone: %w", errno)
		if w.Namespaces && (errno == unix.EPERM || errno == unix.ENOSPC || errno == unix.EINVAL) {
			err = fmt.Errorf("%w (clone: %v)", errNoUserNS, errno)
		}
		return err
	}
	unix.Setpgid(pid, pid) // as the child does: whichever comes first
	if s.proc, err = os.FindProcess(pid); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		return fmt.Errorf("find the sandbox child: %w", err)
	}
	if err := s.mapIDs(w, pid); err != nil {
		s.kill()
		return err
	}
	if err := sendSync(s.sync, syncMsg{Kind: msgMapsDone}); err != nil {
		s.kill()
		return err
	}
	return nil
}

// clone clones the child from a thread that stays until release.
func (s *startedChild) clone(c *childProg) (int, syscall.Errno) {
	type result struct {
		pid   uintptr
		errno syscall.Errno
	}
	started, done := make(chan result), make(chan struct{})
	s.release = sync.OnceFunc(func() { close(done) })
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		syscall.ForkLock.Lock()
		pid, errno := forkChild(c)
		syscall.ForkLock.Unlock()
		started <- result{pid, errno}
		<-done
	}()
	r := <-started
	return int(r.pid), r.errno
}

// mapIDs writes the child's uid and gid maps: the caller's ids map to
// themselves, so `id` is unchanged.
func (s *startedChild) mapIDs(w *wire, pid int) error {
	if !w.Namespaces {
		return nil
	}
	dir := fmt.Sprintf("/proc/%d/", pid)
	for _, f := range []struct{ name, data string }{
		{"uid_map", fmt.Sprintf("%d %d 1\n", w.Plan.UID, w.Plan.UID)},
		{"setgroups", "deny"},
		{"gid_map", fmt.Sprintf("%d %d 1\n", w.Plan.GID, w.Plan.GID)},
	} {
		if err := os.WriteFile(dir+f.name, []byte(f.data), 0); err != nil {
			return fmt.Errorf("write the sandbox's %s: %w", f.name, err)
		}
	}
	return nil
}

// report waits for the child's report: the descriptors it made for the
// supervisor (the proxies' listeners, then the notify listener, if any),
// or the error of the step that failed. A child that died first reports
// nothing: then its exit says what happened.
func (s *startedChild) report() (listeners []*os.File, notify *os.File, err error) {
	m, files, ok := readSync(int(s.sync.Fd()), maxListeners+1)
	switch {
	case !ok:
		return nil, nil, errChildGone
	case m.Kind == msgFailed:
		closeFiles(files)
		return nil, nil, s.prog.failure(int(m.Step), unix.Errno(m.Errno))
	case m.Kind != msgReady || int(m.Arg) != len(files) || int(m.Step) > len(files):
		closeFiles(files)
		return nil, nil, fmt.Errorf("the sandbox child reported %+v with %d descriptors", m, len(files))
	}
	listeners, rest := files[:m.Step], files[m.Step:]
	if len(rest) > 0 {
		notify = rest[0]
	}
	return listeners, notify, nil
}

// testOnlyLowered, when set, sees each program before it runs: a test
// breaks a step in it that no plan can.
var testOnlyLowered func(*program)

// errChildGone is the end of the sync socket before any report.
var errChildGone = errors.New("the sandbox child ended before it reported")

// kill ends the child and waits for it.
func (s *startedChild) kill() {
	if s.proc == nil {
		return
	}
	s.proc.Kill()
	s.proc.Wait()
}

// abort ends a child that will not be served, and what the supervisor
// holds of it.
func (s *startedChild) abort() {
	s.kill()
	s.release()
	s.close()
}

func (s *startedChild) close() {
	s.sync.Close()
	s.jobs.Close()
}

// maxListeners bounds the descriptors one ready message can carry: the
// two proxies and two per local port.
const maxListeners = 2 + 2*64
