//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// writableByCaller reports whether this process may create entries in
// dir: a sandbox of the same user may have.
func writableByCaller(dir string) bool { return syscall.Access(dir, 2) == nil }

// ownedByCaller reports whether this process's user owns the file of fi,
// and so could change its mode.
func ownedByCaller(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
