// Command escape tries, from inside a sandbox, the operations fence's
// seccomp filter, capability drop and init hardening must stop. It prints
// one line per attempt: "NAME: ok" or "NAME: <errno name>".
package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	try("ptrace-init", func() error { return unix.PtraceAttach(1) })
	try("open-init-mem", func() error {
		f, err := os.Open("/proc/1/mem")
		if err == nil {
			f.Close()
		}
		return err
	})
	try("mount-tmpfs", func() error { return unix.Mount("tmpfs", "/tmp", "tmpfs", 0, "") })
	try("umount-proc", func() error { return unix.Unmount("/proc", unix.MNT_DETACH) })
	try("unshare-user", func() error { return unix.Unshare(unix.CLONE_NEWUSER) })
	try("unshare-mount", func() error { return unix.Unshare(unix.CLONE_NEWNS) })
	try("clone-newuser", func() error {
		_, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		return errnoErr(e)
	})
	try("clone3", func() error {
		_, _, e := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		return errnoErr(e)
	})
	try("setns", func() error { return unix.Setns(0, 0) })
	try("tiocsti", func() error {
		c := byte('x')
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		return errnoErr(e)
	})
	try("personality", func() error {
		_, _, e := unix.RawSyscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0) // ADDR_NO_RANDOMIZE
		return errnoErr(e)
	})
	try("keyctl", func() error {
		_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
		return err
	})
	try("bpf", func() error {
		_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0)
		return errnoErr(e)
	})
	try("chroot", func() error { return unix.Chroot("/") })
	try("sethostname", func() error { return unix.Sethostname([]byte("x")) })
	try("setuid-0", func() error { return unix.Setuid(0) })
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func try(name string, f func() error) {
	err := f()
	var errno syscall.Errno
	switch {
	case err == nil:
		fmt.Printf("%s: ok\n", name)
	case errors.As(err, &errno):
		fmt.Printf("%s: %s\n", name, unix.ErrnoName(errno))
	default:
		fmt.Printf("%s: %v\n", name, err)
	}
}
