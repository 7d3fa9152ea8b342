//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"github.com/fence-sandbox/fence/policy/inputs"
)

func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// writableByCaller reports whether this process may create entries in
// dir: a sandbox of the same user may have.
func writableByCaller(dir string) bool { return inputs.Access(dir, 2) == nil }

// ownedByCaller reports whether this process's user owns the file of fi,
// and so could change its mode.
func ownedByCaller(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// ownerOf names the user who owns the file of fi.
func ownerOf(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("uid %d", st.Uid)
	}
	return "another user"
}

// othersMayChange says how a user other than this process's and root
// could rename or replace an entry of dir: empty when none could.
func othersMayChange(dir string) string {
	fi, err := inputs.Stat(dir)
	if err != nil {
		return fmt.Sprintf("fence could not look at %s (%v)", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "fence cannot tell who may change " + dir
	}
	if int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return fmt.Sprintf("%s, a directory on the way, belongs to uid %d", dir, st.Uid)
	}
	if st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0 {
		return fmt.Sprintf("%s, a directory on the way, can be written by other users", dir)
	}
	return ""
}
