//go:build unix

package inputs

import (
	"strconv"

	"golang.org/x/sys/unix"
)

func init() {
	for _, mode := range []uint32{unix.W_OK, unix.X_OK} {
		Register(accessOp(mode), func(p string) string { return errOrOK(unix.Access(p, mode)) })
	}
}

func accessOp(mode uint32) string { return "access" + strconv.Itoa(int(mode)) }

// Access is unix.Access, observed.
func Access(p string, mode uint32) error {
	err := unix.Access(p, mode)
	if Recording() {
		Note(accessOp(mode), p, errOrOK(err))
	}
	return err
}

func errOrOK(err error) string {
	if err != nil {
		return errSeen(err)
	}
	return "ok"
}
