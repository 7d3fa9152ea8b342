package sandbox

import (
	"fmt"
	"syscall"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// fileStamp names a file's state, "" when it is missing: its inode and
// change time, which a command cannot set back (touch sets the
// modification time only), and its size.
func fileStamp(path string) string {
	fi, err := inputs.Stat(path)
	if err != nil {
		return ""
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%d:%d.%d:%d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec, st.Size)
}
