package sandbox

import (
	"fmt"
	"syscall"
)

// fileStamp names a file's state, "" when it is missing: its inode and
// change time, which a command cannot set back (touch sets the
// modification time only), and its size.
func fileStamp(path string) string {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return ""
	}
	return fmt.Sprintf("%d:%d.%d:%d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec, st.Size)
}
