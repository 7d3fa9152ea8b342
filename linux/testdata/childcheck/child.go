// Package childcheck breaks the rules of the sandbox child's code on
// purpose: TestChildCheckCatches runs the checks on it.
package childcheck

import (
	"fmt"
	"syscall"
)

var sink any

// entry is where the checks start.
func entry() {
	ok()
}

//go:nosplit
func ok() {
	syscall.RawSyscall6(syscall.SYS_GETPID, 0, 0, 0, 0, 0, 0)
	notNosplit()
	allocates(3)
	_ = fmt.Sprint(1)
	f := func() {}
	f()
}

func notNosplit() {}

//go:nosplit
func allocates(n int) {
	sink = make([]byte, n)
}
