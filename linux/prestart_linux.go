package linux

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// startedInit is a sandbox init that runs and waits for its plan.
type startedInit struct {
	cmd          *exec.Cmd
	planW, statR *os.File
	// w is what the init was started for: its namespaces and descriptors.
	w   *wire
	err error
	// release lets the thread that started the init go: the kernel sends
	// the init SIGKILL (Pdeathsig) when that thread ends, so it stays
	// until the sandbox is over.
	release func()
}

// startInit starts the init that w describes, on a thread of its own
// that stays until release. The init then waits for its plan.
func startInit(w *wire) *startedInit {
	s := &startedInit{w: w}
	started, done := make(chan struct{}), make(chan struct{})
	s.release = sync.OnceFunc(func() { close(done) })
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s.start(w)
		close(started)
		<-done
	}()
	<-started
	return s
}

func (s *startedInit) start(w *wire) {
	// Descriptors fence inherited without close-on-exec (an open
	// directory, say) would reach past the mounts: no one gets them.
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		s.err = fmt.Errorf("close_range: %w", err)
		return
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		s.err = err
		return
	}
	statR, statW, err := statusPair()
	if err != nil {
		planR.Close()
		planW.Close()
		s.err = err
		return
	}
	s.cmd = initCommand(w, planR, statW)
	err = s.cmd.Start()
	planR.Close()
	statW.Close()
	if err != nil {
		planW.Close()
		statR.Close()
		s.err = fmt.Errorf("start sandbox init: %w", err)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EINVAL) {
			s.err = fmt.Errorf("%w (clone: %v)", errNoUserNS, err)
		}
		return
	}
	s.planW, s.statR = planW, statR
}

// abort ends an init that will get no plan, and waits for it: it is
// gone when abort returns.
func (s *startedInit) abort() {
	if s.err != nil {
		return
	}
	s.planW.Close() // no plan: the init exits without a word
	s.statR.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.err = errors.New("sandbox init ended unused")
}

// Prestarted is a sandbox init started before the plan is ready, so
// that its start-up (a new Go runtime, the namespaces) overlaps fence's
// reading of the policy and planning.
type Prestarted struct {
	done chan struct{}
	init *startedInit
}

// Prestart starts, in the background, an init with the namespaces most
// plans need (a private network included) for a caller of uid and gid
// who keeps the descriptors keepFDs. Run takes it; Release ends it if
// Run does not. Call it after the descriptors have been checked: it
// marks every other one close-on-exec.
func Prestart(uid, gid int, keepFDs []int) *Prestarted {
	p := &Prestarted{done: make(chan struct{})}
	w := &wire{Plan: &sandbox.Plan{Network: "none", UID: uid, GID: gid, KeepFDs: keepFDs}, Namespaces: true}
	go func() {
		defer close(p.done)
		p.init = startInit(w)
	}()
	return p
}

// take returns the prestarted init when it can run w (the same network
// and namespaces), and ends it otherwise. p may be nil.
func (p *Prestarted) take(w *wire) *startedInit {
	if p == nil {
		return nil
	}
	<-p.done
	s := p.init
	p.init = nil
	if s.err == nil && !s.fits(w) {
		s.abort()
		s.release()
		return nil
	}
	return s
}

// fits reports whether the init can run w: it has the namespaces and the
// descriptors w needs.
func (s *startedInit) fits(w *wire) bool {
	return s.w.Namespaces == w.Namespaces && s.w.Plan.Network == w.Plan.Network && slices.Equal(s.w.Plan.KeepFDs, w.Plan.KeepFDs)
}

// Release ends the prestarted init unless Run took it. p may be nil.
func (p *Prestarted) Release() {
	if p == nil {
		return
	}
	<-p.done
	if p.init != nil {
		p.init.abort()
		p.init.release()
		p.init = nil
	}
}
