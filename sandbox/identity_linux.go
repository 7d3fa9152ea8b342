package sandbox

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// scanDir finds the other names of the table's programs in dir. It runs
// at every start over a thousand files and more, so it reads the
// directory with getdents64 and stats an entry only when its inode is
// not already known, with the name in the kernel's buffer: no
// allocation per file. A symlink whose name is a rule's (git's dashed
// programs) is left to the rules.
func (t *programs) scanDir(p *policy.Policy, dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
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
	for {
		n, err := unix.Getdents(fd, buf)
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
			switch typ {
			case unix.DT_REG:
				if _, ok := t.files[fileKey{dev, ino}]; ok {
					t.entry(p, filepath.Join(dir, string(name[:end])), string(name[:end]), fileKey{dev, ino}, 0, false)
					continue
				}
				if fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || len(t.sizes[st.Size]) == 0 {
					continue
				}
			case unix.DT_LNK:
				if p.CommandNamed(string(name[:end])) || fstatat(fd, name, &st, 0) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
					continue
				}
				if _, ok := t.files[fileKey{uint64(st.Dev), st.Ino}]; !ok && len(t.sizes[st.Size]) == 0 {
					continue
				}
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
