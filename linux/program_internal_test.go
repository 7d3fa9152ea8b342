//go:build linux

package linux

import (
	"os"

	"golang.org/x/sys/unix"
)

// runHere runs the steps of p in this process, as the sandbox child
// would, and returns their slots, or the error of the step that failed.
func runHere(p *program) ([]uintptr, error) {
	if p.err != nil {
		return nil, p.err
	}
	c := p.childProg(childFDs{sync: -1, jobs: -1}, 0, nil)
	if i, e := runSteps(c); i >= 0 {
		return c.slots, p.failure(i, unix.Errno(e))
	}
	return c.slots, nil
}

// listenFile runs, in this process, the steps of the sandbox program
// that open a listening socket on addr.
func listenFile(addr string) (*os.File, error) {
	p := &program{}
	fd := p.listen(addr)
	slots, err := runHere(p)
	if err != nil {
		if slots != nil && slots[fd-1] != 0 {
			unix.Close(int(slots[fd-1]))
		}
		return nil, err
	}
	return os.NewFile(slots[fd-1], addr), nil
}

// cloneResolvedTree runs, in this process, the steps of the sandbox
// program that take a detached copy of the tree at path, which the plan
// resolved.
func cloneResolvedTree(path string, readOnly, recursive bool) (int, error) {
	r := &rootSteps{program: &program{}, trees: map[string]int16{}}
	out := r.cloneResolvedTree(path, readOnly, recursive)
	slots, err := runHere(r.program)
	if err != nil {
		return -1, err
	}
	return int(slots[out-1]), nil
}
