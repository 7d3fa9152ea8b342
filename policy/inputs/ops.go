package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The operations of this package, as observations name them.
const (
	OpLstat    = "lstat"
	OpStat     = "stat"
	OpReadDir  = "readdir"
	OpRead     = "read"
	OpOpen     = "open"
	OpReadlink = "readlink"
	OpEval     = "eval"
	OpLookPath = "lookpath"
)

func init() {
	Register(OpLstat, func(p string) string { return statSeen(os.Lstat(p)) })
	Register(OpStat, func(p string) string { return statSeen(os.Stat(p)) })
	registerListing(OpReadDir, func(p string) string {
		entries, err := os.ReadDir(p)
		return dirSeen(foreignEntries(p, entries), err)
	})
	Register(OpRead, func(p string) string { return contentSeen(readRegular(p)) })
	Register(OpOpen, openSeen)
	Register(OpReadlink, func(p string) string { return valueSeen(os.Readlink(p)) })
	Register(OpEval, func(p string) string { return valueSeen(filepath.EvalSymlinks(p)) })
	Register(OpLookPath, func(p string) string { return valueSeen(exec.LookPath(p)) })
}

// Lstat is os.Lstat, observed.
func Lstat(p string) (fs.FileInfo, error) {
	fi, err := os.Lstat(p)
	if Recording() && !ownFile(p, fi, err, false) {
		Note(OpLstat, p, statSeen(fi, err))
	}
	return fi, err
}

// Stat is os.Stat, observed.
func Stat(p string) (fs.FileInfo, error) {
	fi, err := os.Stat(p)
	if Recording() && !ownFile(p, fi, err, true) {
		Note(OpStat, p, statSeen(fi, err))
	}
	return fi, err
}

// ReadDir is os.ReadDir, observed: the names and kinds of the entries
// (see listingSeen).
func ReadDir(p string) ([]fs.DirEntry, error) {
	if !Recording() {
		return os.ReadDir(p)
	}
	stamp := dirStamp(p)
	entries, err := os.ReadDir(p)
	if isOwnDir(p) {
		stamp = "" // fence's own entries move the stamp: list it again
	}
	Note(OpReadDir, p, listingSeen(stamp, dirSeen(foreignEntries(p, entries), err)))
	return entries, err
}

// ReadFile is os.ReadFile of a regular file (see OpenFile), observed by
// the hash of the content.
func ReadFile(p string) ([]byte, error) {
	b, err := readRegular(p)
	if Recording() {
		Note(OpRead, p, contentSeen(b, err))
	}
	return b, err
}

// Open is os.Open of a regular file (see OpenFile), observed by what
// the open file is (its fstat); a caller that reads the content notes it
// with NoteContent.
func Open(p string) (*os.File, error) {
	f, err := OpenFile(p)
	if Recording() {
		Note(OpOpen, p, fileSeen(f, err))
	}
	return f, err
}

// NoteContent notes that the file at p, read otherwise, held b.
func NoteContent(p string, b []byte) {
	if Recording() {
		Note(OpRead, p, contentSeen(b, nil))
	}
}

// Readlink is os.Readlink, observed.
func Readlink(p string) (string, error) {
	s, err := os.Readlink(p)
	if Recording() {
		Note(OpReadlink, p, valueSeen(s, err))
	}
	return s, err
}

// EvalSymlinks is filepath.EvalSymlinks, observed by its result.
func EvalSymlinks(p string) (string, error) {
	s, err := filepath.EvalSymlinks(p)
	if Recording() {
		Note(OpEval, p, valueSeen(s, err))
	}
	return s, err
}

// LookPath is exec.LookPath, observed by its result (PATH itself is in
// the cache's key).
func LookPath(name string) (string, error) {
	s, err := exec.LookPath(name)
	if Recording() {
		Note(OpLookPath, name, valueSeen(s, err))
	}
	return s, err
}

// WalkDir is filepath.WalkDir through Lstat and ReadDir, observed; fn
// is called as filepath.WalkDir calls it.
func WalkDir(root string, fn fs.WalkDirFunc) error {
	fi, err := Lstat(root)
	if err != nil {
		return fn(root, nil, err)
	}
	err = walk(root, fs.FileInfoToDirEntry(fi), fn)
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func walk(p string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(p, d, nil); err != nil || !d.IsDir() {
		if errors.Is(err, filepath.SkipDir) && d.IsDir() {
			err = nil
		}
		return err
	}
	entries, err := ReadDir(p)
	if err != nil {
		if err = fn(p, d, err); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				err = nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := walk(filepath.Join(p, e.Name()), e, fn); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				break
			}
			return err
		}
	}
	return nil
}

// statSeen is the digest of a stat: kind and mode, owner and the
// file's identity, and for all but directories the size, modification
// and change times and links. A directory's times change with every
// entry made in it (/tmp, the home), and what planning takes from its
// entries it takes from a listing, noted as such.
func statSeen(fi fs.FileInfo, err error) string {
	if err != nil {
		return errSeen(err)
	}
	// As fmt would print "%o", then " %d:%d %d.%d" and so on; strconv
	// is several times cheaper, and a hit makes a thousand of these.
	b := make([]byte, 0, 96)
	b = strconv.AppendUint(b, uint64(uint32(fi.Mode())), 8)
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok {
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(st.Uid), 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(st.Gid), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(st.Dev), 10)
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(st.Ino), 10)
	}
	if fi.IsDir() {
		return string(b)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, fi.Size(), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 10)
	if ok {
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(st.Nlink), 10)
		b = append(b, ' ')
		b = append(b, changeTime(st)...)
	}
	return string(b)
}

// StatSeen is the digest Stat and Lstat note for a result.
func StatSeen(fi fs.FileInfo, err error) string { return statSeen(fi, err) }

func fileSeen(f *os.File, err error) string {
	if err != nil {
		return errSeen(err)
	}
	return statSeen(f.Stat())
}

func openSeen(p string) string {
	f, err := OpenFile(p)
	if err == nil {
		defer f.Close()
	}
	return fileSeen(f, err)
}

// ErrNotRegular is what reading a path that is not a regular file (a
// FIFO, a device, a socket, a directory) finds.
var ErrNotRegular = errors.New("not a regular file")

// OpenFile opens the regular file at p for reading. The open does not
// block (O_NONBLOCK: a FIFO a sandbox left where planning reads a file
// would stall every later run), and anything but a regular file is
// refused with ErrNotRegular before a byte is read, as an unreadable
// file is. Links are followed, as the configured paths read through
// here (a dotfile linked from elsewhere) may be links.
func OpenFile(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err = unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = ErrNotRegular
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// readRegular is the content of the regular file at p.
func readRegular(p string) ([]byte, error) {
	f, err := OpenFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// dirSeen is the digest of a listing: each name with its kind.
func dirSeen(entries []fs.DirEntry, err error) string {
	if err != nil && len(entries) == 0 {
		return errSeen(err)
	}
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00%o\x00", e.Name(), uint32(e.Type()))
	}
	if err != nil {
		io.WriteString(h, errSeen(err))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func contentSeen(b []byte, err error) string {
	if err != nil {
		return errSeen(err)
	}
	return Digest(b)
}

func valueSeen(s string, err error) string {
	if err != nil {
		return errSeen(err)
	}
	return "=" + s
}

// errSeen names an error by its errno where it has one, so that the
// digest does not depend on the path in the message.
func errSeen(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "error " + strconv.Itoa(int(errno))
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "error not found"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return "error " + msg
}
