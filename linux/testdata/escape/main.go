// Command escape tries, from inside a sandbox, the operations fence's
// seccomp filter, capability drop, mounts, Landlock and init hardening
// must stop. It prints one line per attempt: "NAME: ok" or
// "NAME: <errno name>".
//
//	escape [-secret PATH] [-hostpid PID] [-mask PATH]
//
// -secret names a file the policy denies (read through /proc, linked,
// looked for among inherited descriptors), -hostpid a process outside the
// sandbox, -mask a path the sandbox mounted over.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

var (
	secret  = flag.String("secret", "", "a file the policy denies")
	hostPID = flag.Int("hostpid", 0, "a process outside the sandbox")
	mask    = flag.String("mask", "", "a path the sandbox mounted over")
)

func main() {
	flag.Parse()
	syscalls()
	filesystem()
	devices()
	processes()
	fmt.Println("finished: ok") // signals to the init did not end the sandbox
}

func syscalls() {
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
	try("keyctl-plan-cache", func() error {
		_, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", "fence:plan-cache", 0)
		return err
	})
	try("bpf", func() error {
		_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0)
		return errnoErr(e)
	})
	try("chroot", func() error { return unix.Chroot("/") })
	try("sethostname", func() error { return unix.Sethostname([]byte("x")) })
	try("tioclinux", func() error {
		sub := byte(11) // TIOCL_GETSHIFTSTATE
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCLINUX, uintptr(unsafe.Pointer(&sub)))
		return errnoErr(e)
	})
	try("remount-root-rw", func() error { return unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND, "") })
	try("pivot-root", func() error { return unix.PivotRoot(".", ".") })
	try("open-tree", func() error {
		_, err := unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE)
		return err
	})
	try("fsopen", func() error {
		_, err := unix.Fsopen("tmpfs", 0)
		return err
	})
	try("perf-event-open", func() error {
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
		_, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		return err
	})
	try("userfaultfd", func() error {
		_, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
		return errnoErr(e)
	})
	try("io-uring-setup", func() error {
		params := make([]byte, 120)
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		return errnoErr(e)
	})
	try("init-module", func() error {
		_, _, e := unix.Syscall(unix.SYS_INIT_MODULE, 0, 0, 0)
		return errnoErr(e)
	})
	try("kexec-load", func() error {
		_, _, e := unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0)
		return errnoErr(e)
	})
	try("reboot", func() error { return unix.Reboot(unix.LINUX_REBOOT_CMD_CAD_OFF) })
	try("swapon", func() error {
		_, _, e := unix.Syscall(unix.SYS_SWAPON, 0, 0, 0)
		return errnoErr(e)
	})
	try("acct", func() error { return unix.Acct("") })
	try("syslog", func() error {
		_, err := unix.Klogctl(10, nil) // SYSLOG_ACTION_SIZE_BUFFER
		return err
	})
	try("open-by-handle-at", func() error {
		_, _, e := unix.Syscall(unix.SYS_OPEN_BY_HANDLE_AT, 0, 0, 0)
		return errnoErr(e)
	})
	try("packet-socket", func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	try("mknod-disk", func() error { return unix.Mknod("/tmp/sda", unix.S_IFBLK|0o600, int(unix.Mkdev(8, 0))) })
}

// filesystem reaches for the denied file and the sandbox's mounts.
func filesystem() {
	if *secret != "" {
		try("proc-self-root", func() error { return readFile("/proc/self/root" + *secret) })
		try("proc-init-root", func() error { return readFile("/proc/1/root" + *secret) })
		try("hardlink-secret", func() error { return unix.Link(*secret, "hardlink-to-secret") })
		try("symlink-secret", func() error {
			if err := os.Symlink(*secret, "symlink-to-secret"); err != nil {
				return err
			}
			return readFile("symlink-to-secret")
		})
		try("inherited-fd", func() error {
			ents, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				return err
			}
			for _, e := range ents {
				if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); target == *secret {
					return nil // a descriptor on the secret reached the sandbox
				}
			}
			return unix.EBADF
		})
	}
	if *mask != "" {
		try("umount-mask", func() error { return unix.Unmount(*mask, unix.MNT_DETACH) })
	}
	try("proc-init-fd", func() error { return readFile("/proc/1/fd/0") })
	try("proc-init-environ", func() error { return readFile("/proc/1/environ") })
	try("write-sys", func() error { return writeFile("/sys/kernel/mm/ksm/run") })
	try("write-cgroup", func() error { return writeFile("/sys/fs/cgroup/cgroup.procs") })
	try("write-proc-sysrq", func() error { return writeFile("/proc/sysrq-trigger") })
}

// processes reaches for what lives outside the sandbox.
func processes() {
	if *hostPID != 0 {
		try("kill-host", func() error { return unix.Kill(*hostPID, 0) })
		try("ptrace-host", func() error { return unix.PtraceAttach(*hostPID) })
		try("vm-read-host", func() error {
			buf := make([]byte, 8)
			local := []unix.Iovec{{Base: &buf[0], Len: 8}}
			remote := []unix.RemoteIovec{{Base: 0x400000, Len: 8}}
			_, err := unix.ProcessVMReadv(*hostPID, local, remote, 0)
			return err
		})
	}
	try("vm-read-init", func() error {
		buf := make([]byte, 8)
		local := []unix.Iovec{{Base: &buf[0], Len: 8}}
		remote := []unix.RemoteIovec{{Base: 0x400000, Len: 8}}
		_, err := unix.ProcessVMReadv(1, local, remote, 0)
		return err
	})
	try("kill-init", func() error { return unix.Kill(1, unix.SIGKILL) })
	try("setuid-0", func() error { return unix.Setuid(0) })
}

// devices opens what a minimal /dev must not have.
func devices() {
	for _, d := range []string{"/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/nvme0n1"} {
		try("open"+strings.ReplaceAll(d, "/", "-"), func() error { return readFile(d) })
	}
}

func readFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Read(make([]byte, 1))
	if err == io.EOF {
		return nil // readable, if empty
	}
	return err
}

func writeFile(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
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
