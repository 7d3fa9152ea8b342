//go:build unix

package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// OSFS reads config files from the real filesystem. It refuses a file that
// another user could have planted or edited: one owned by someone other
// than the caller or root, or one that anyone may write.
type OSFS struct{}

// ReadFile reads path after checking who can change it.
func (OSFS) ReadFile(path string) ([]byte, error) {
	f, err := inputs.Open(path)
	if errors.Is(err, inputs.ErrNotRegular) {
		return nil, fmt.Errorf("config %q is not a regular file", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := trusted(path, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err == nil {
		inputs.NoteContent(path, b)
	}
	return b, err
}

func trusted(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("config %q is not a regular file", path)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("config %q is writable by every user (mode %#o), so it cannot be trusted: run chmod o-w %q", path, fi.Mode().Perm(), path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() && st.Uid != 0 {
		return fmt.Errorf("config %q is owned by uid %d, neither you nor root, so it cannot be trusted", path, st.Uid)
	}
	return nil
}
