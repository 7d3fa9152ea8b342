package sandbox

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// scanDir finds the hard links of the table's programs in dir. It runs
// at every start over a thousand files and more, so it reads the
// directory with getdents64 and judges an entry by the inode the kernel
// gives with its name, with no system call and no allocation per file
// (a file system that gives no type is stat-ed). Links and copies under
// other names are judged when a command uses them (identify), not here.
func (t *programs) scanDir(p *policy.Policy, dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0) // observed: as inputs.OpInodes
	if err != nil {
		inputs.Note(inputs.OpInodes, dir, inputs.InodesError(err))
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	dev := uint64(st.Dev)
	if t.dirent == nil {
		t.dirent = make([]byte, 32<<10)
	}
	buf := t.dirent
	seen := inputs.NewInodes(dir)
	defer inputs.NoteInodes(dir, seen)
	for {
		n, err := unix.Getdents(fd, buf) // observed: as inputs.OpInodes, entry by entry
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+19 <= n; {
			ino := binary.NativeEndian.Uint64(buf[off:])
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			typ := buf[off+18]
			name := buf[off+19 : off+reclen] // NUL-terminated, then padding
			off += reclen
			end := bytes.IndexByte(name, 0)
			if end <= 0 || reclen == 0 {
				continue
			}
			seen.Add(name[:end], ino, typ)
			switch typ {
			case unix.DT_REG:
				// A hard link is known by the inode the directory gives;
				// a file of another inode is not read here (a copy under
				// another name is judged when it is used: see identify).
				if _, ok := t.files[fileKey{dev, ino}]; ok {
					t.entry(p, filepath.Join(dir, string(name[:end])), string(name[:end]), fileKey{dev, ino}, 0, false)
				}
				continue
			case unix.DT_LNK:
				// A link leads to a file judged by what it is, when it
				// is used; in path mode the file's mask covers it.
				continue
			case unix.DT_UNKNOWN:
				if fstatat(fd, name, &st, 0) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
					continue
				}
			default:
				continue
			}
			base := string(name[:end])
			t.entry(p, filepath.Join(dir, base), base, fileKey{uint64(st.Dev), st.Ino}, st.Size, typ != unix.DT_REG)
		}
	}
}

// fstatat stats the NUL-terminated name in dirfd.
func fstatat(dirfd int, name []byte, st *unix.Stat_t, flags int) error {
	_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
