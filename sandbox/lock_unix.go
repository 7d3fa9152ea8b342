//go:build unix

package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

const noFollow = unix.O_NOFOLLOW

// LockDir holds an exclusive lock on dir until unlock is called: one
// writer at a time for the files fence keeps there (the audit log, the
// trust record).
func LockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return func() { d.Close() }, nil
}
