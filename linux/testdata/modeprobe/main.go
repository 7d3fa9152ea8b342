// Command modeprobe tries, from inside a sandbox, every system call that
// changes a file's mode, owner or extended attributes, or creates a file
// with a mode. It prints one line per attempt: "CALL PATH: ok" or
// "CALL PATH: <error>".
//
//	modeprobe chmod MODE PATH...   chmod, fchmodat, fchmodat2, fchmod (and SYS_CHMOD on amd64)
//	modeprobe create MODE PATH     openat, mknodat, openat2 (and open, creat on amd64), at PATH.CALL
//	modeprobe chown PATH...        fchownat, fchown to the caller's own ids
//	modeprobe xattr PATH...        a user attribute and an ACL granting others rwx, then removal
//	modeprobe subreaper CMD...     become a child subreaper, run CMD, then hold on to its orphans
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: modeprobe chmod|create MODE PATH... | chown|xattr PATH...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "subreaper":
		subreaper(os.Args[2:])
	case "chmod":
		mode := parseMode(os.Args[2])
		for _, p := range os.Args[3:] {
			chmod(p, mode)
		}
	case "create":
		create(os.Args[3], parseMode(os.Args[2]))
	case "chown":
		for _, p := range os.Args[2:] {
			try("fchownat", p, func() error { return unix.Fchownat(unix.AT_FDCWD, p, os.Getuid(), os.Getgid(), 0) })
			withFD(p, "fchown", func(fd int) error { return unix.Fchown(fd, os.Getuid(), os.Getgid()) })
		}
	case "xattr":
		for _, p := range os.Args[2:] {
			try("setxattr-user", p, func() error { return unix.Setxattr(p, "user.fence", []byte("x"), 0) })
			try("setxattr-acl", p, func() error { return unix.Setxattr(p, "system.posix_acl_access", othersRWX(), 0) })
			withFD(p, "fsetxattr", func(fd int) error { return unix.Fsetxattr(fd, "user.fence", []byte("x"), 0) })
			try("removexattr", p, func() error { return unix.Removexattr(p, "user.fence") })
		}
	}
}

// subreaper runs argv as a child subreaper, so that what argv leaves
// running becomes this process's, and then never exits.
func subreaper(argv []string) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Run()
	for {
		unix.Pause()
	}
}

func parseMode(s string) uint32 {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bad mode %q\n", s)
		os.Exit(2)
	}
	return uint32(m)
}

func chmod(p string, mode uint32) {
	if runtime.GOARCH == "amd64" {
		try("chmod", p, func() error { return raw(unix.SYS_CHMOD, ptr(p), uintptr(mode)) })
	}
	try("fchmodat", p, func() error { return raw(unix.SYS_FCHMODAT, atFDCWD, ptr(p), uintptr(mode)) })
	try("fchmodat2", p, func() error {
		err := raw(unix.SYS_FCHMODAT2, atFDCWD, ptr(p), uintptr(mode), 0)
		if errors.Is(err, unix.ENOSYS) {
			return nil // a kernel before 6.6: nothing to refuse
		}
		return err
	})
	withFD(p, "fchmod", func(fd int) error { return unix.Fchmod(fd, mode) })
}

func create(p string, mode uint32) {
	flags := uintptr(unix.O_CREAT | unix.O_WRONLY | unix.O_EXCL | unix.O_CLOEXEC)
	if runtime.GOARCH == "amd64" {
		try("open", p+".open", func() error { return closing(unix.SYS_OPEN, ptr(p+".open"), flags, uintptr(mode)) })
		try("creat", p+".creat", func() error { return closing(unix.SYS_CREAT, ptr(p+".creat"), uintptr(mode)) })
	}
	try("openat", p+".openat", func() error { return closing(unix.SYS_OPENAT, atFDCWD, ptr(p+".openat"), flags, uintptr(mode)) })
	try("mknodat", p+".mknodat", func() error {
		return raw(unix.SYS_MKNODAT, atFDCWD, ptr(p+".mknodat"), uintptr(unix.S_IFREG|mode), 0)
	})
	try("openat2", p+".openat2", func() error {
		how := unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode)}
		return closing(unix.SYS_OPENAT2, atFDCWD, ptr(p+".openat2"), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how))
	})
}

// othersRWX is a POSIX ACL (version 2): owner rwx, group r, others rwx.
func othersRWX() []byte {
	b := []byte{2, 0, 0, 0}
	for _, e := range []struct{ tag, perm uint16 }{{0x01, 7}, {0x04, 4}, {0x20, 7}} {
		b = append(b, byte(e.tag), byte(e.tag>>8), byte(e.perm), byte(e.perm>>8), 0xff, 0xff, 0xff, 0xff)
	}
	return b
}

var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

func ptr(s string) uintptr {
	b, _ := unix.BytePtrFromString(s)
	return uintptr(unsafe.Pointer(b))
}

func raw(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	return nil
}

// closing makes a system call that returns a descriptor, and closes it.
func closing(nr uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	fd, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}

func withFD(p, name string, f func(fd int) error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("%s %s: open: %v\n", name, p, err)
		return
	}
	defer unix.Close(fd)
	try(name, p, func() error { return f(fd) })
}

func try(name, p string, f func() error) {
	if err := f(); err != nil {
		fmt.Printf("%s %s: %v\n", name, p, err)
		return
	}
	fmt.Printf("%s %s: ok\n", name, p)
}
