package linux

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// Finding is one line of `fence doctor`: a feature, whether it works,
// and what its absence costs.
type Finding struct {
	Name   string
	OK     bool
	Detail string
}

// landlockCosts says what each Landlock ABI adds, and so what a kernel
// without it cannot enforce.
var landlockCosts = map[int]string{
	1: "no Landlock at all: fence refuses to run (or, with --degraded=warn, relies on mounts alone)",
	2: "ABI 2 (REFER): without it, renaming across directories inside writable trees fails",
	3: "ABI 3 (TRUNCATE): without it, the Landlock-only fallback cannot stop truncation",
	5: "ABI 5 (IOCTL_DEV): without it, ioctl on device files is not restricted by Landlock",
	6: "ABI 6 (scopes): without it, host-network policies and the Landlock-only fallback are refused",
	9: "ABI 9 (RESOLVE_UNIX): without it, a host unix socket bound after a run starts is reachable (see unix sockets)",
}

// Doctor checks what the kernel offers fence and runs a sandbox probe.
func Doctor() []Finding {
	var uts unix.Utsname
	unix.Uname(&uts)
	out := []Finding{{Name: "kernel", OK: true, Detail: unix.ByteSliceToString(uts.Release[:]) + " " + unix.ByteSliceToString(uts.Machine[:])}}
	abi := KernelLandlockABI()
	f := Finding{Name: "landlock", OK: abi >= 6, Detail: fmt.Sprintf("ABI %d (fence uses up to 9)", abi)}
	for v := 1; v <= 9; v++ {
		if abi < v && landlockCosts[v] != "" {
			f.Detail += "; " + landlockCosts[v]
		}
	}
	out = append(out, f, Finding{Name: "seccomp", OK: seccompAvailable(), Detail: "filter mode with TSYNC"})
	limits, ok := userNSLimits()
	out = append(out, Finding{Name: "user namespaces", OK: ok, Detail: limits}, limitsFinding(), tmpfsFinding(), socketsFinding(abi), wslFinding())
	return append(out, probe())
}

// wslFinding says whether the kernel is WSL's, which decides what
// filesystem.wslInterop does here.
func wslFinding() Finding {
	if sandbox.IsWSL() {
		return Finding{Name: "wsl", OK: true, Detail: "WSL (the kernel's release says so): " + policy.WSLInit + ", the interop binary, is executable unless filesystem.wslInterop is false"}
	}
	return Finding{Name: "wsl", OK: true, Detail: "not WSL: filesystem.wslInterop makes nothing executable here"}
}

// limitsFinding says how the limits section is enforced here: resource
// limits always, and what they cannot do for root.
func limitsFinding() Finding {
	detail := "timeout, and cpu, address space, file size, open files and processes as resource limits"
	if os.Getuid() == 0 {
		detail += "; the process limit does not bind root, so as root only a timeout ends a fork bomb"
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		detail += "; cgroup v1 here (fence reads its memory limit for the sizes of /tmp and /dev/shm, and enforces nothing with cgroups yet)"
	} else {
		detail += "; cgroup v2 here (fence reads its memory limit for the sizes of /tmp and /dev/shm, and enforces nothing with cgroups yet)"
	}
	return Finding{Name: "limits", OK: true, Detail: detail}
}

// tmpfsFinding gives the default sizes of the sandbox's /tmp and
// /dev/shm here, what they are shares of, and where they do not apply.
func tmpfsFinding() Finding {
	s := SizeTmpfs(policy.RunLimits{})
	detail := fmt.Sprintf("by default /tmp %d MiB and /dev/shm %d MiB: a quarter and an eighth of %s, and an inode per %d KiB of size;"+
		" limits.tmpSizeMB, limits.shmSizeMB, --limit-tmp and --limit-shm set them (a flag only lowers);"+
		" no size applies to a host tree bound writable inside the private /tmp, to the host's /dev/shm (devices.mode \"host\"), or with Landlock alone",
		s.TmpMB, s.ShmMB, s.Memory, policy.BytesPerInode>>10)
	return Finding{Name: "tmp and shm", OK: true, Detail: detail}
}

// socketsFinding says how the host's unix sockets are kept from the
// command on this kernel.
func socketsFinding(abi int) Finding {
	socks, err := sandbox.FindHostSockets(os.Environ(), nil)
	if err != nil {
		return Finding{Name: "unix sockets", OK: false, Detail: err.Error() + ": fence refuses to plan a run"}
	}
	n := len(socks)
	if abi >= 9 {
		return Finding{Name: "unix sockets", OK: true, Detail: fmt.Sprintf("Landlock refuses connecting to every pathname socket the policy does not list and the sandbox did not make; the %d host sockets this user could reach now are masked as well", n)}
	}
	return Finding{Name: "unix sockets", OK: true, Detail: fmt.Sprintf("the %d host sockets this user could reach now (bound in this network namespace, under /run, $SSH_AUTH_SOCK) would be masked; "+
		"with Landlock ABI %d a socket bound after a run starts, bound by a relative path, or reached by another link or mount fence did not see stays reachable (ABI 9 refuses them)", n, abi)}
}

func seccompAvailable() bool {
	b, err := os.ReadFile("/proc/self/status")
	return err == nil && strings.Contains(string(b), "\nSeccomp:")
}

// UserNamespacesBlocked reports whether the system's settings keep this
// user from creating user namespaces, so that a run will be the
// Landlock-only engine's: its plan then holds that engine's rules from
// the start (sandbox.Options.LandlockOnly). A run the settings allow
// may still find out at start that it cannot.
func UserNamespacesBlocked() bool {
	_, ok := userNSLimits()
	return !ok
}

// userNSLimits reports the sysctls that govern user namespaces, and
// whether they let this user create one.
func userNSLimits() (string, bool) {
	var parts []string
	ok := true
	for _, k := range []struct{ key, blocks string }{
		{"user/max_user_namespaces", "0"},
		{"kernel/unprivileged_userns_clone", "0"},
		{"kernel/apparmor_restrict_unprivileged_userns", "1"},
	} {
		b, err := os.ReadFile("/proc/sys/" + k.key)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		parts = append(parts, fmt.Sprintf("%s=%s", strings.ReplaceAll(k.key, "/", "."), v))
		if v == k.blocks && (os.Getuid() != 0 || k.key == "user/max_user_namespaces") {
			ok = false
		}
	}
	return strings.Join(parts, ", "), ok
}

// probe runs /bin/true in a full sandbox: namespaces, mounts, Landlock,
// capabilities and seccomp.
func probe() Finding {
	plan := &sandbox.Plan{
		Argv: []string{"/bin/true"}, Dir: "/", UID: os.Getuid(), GID: os.Getgid(), Network: "none",
		Mounts:   sandbox.Mounts{PrivateTmp: true, Devices: "minimal"},
		Landlock: sandbox.Landlock{Rules: []sandbox.LandlockRule{{Path: "/", Access: "read", Kind: sandbox.KindOpenReads}}, MinABI: 1},
		Degraded: "warn",
	}
	code, err := supervise(&wire{Plan: plan, Namespaces: true}, io.Discard)
	switch {
	case errors.Is(err, errNoUserNS):
		return Finding{Name: "sandbox probe", Detail: fmt.Sprintf("%v: fence falls back to Landlock alone (%s)", err, strings.Join(sandbox.Weaker, "; "))}
	case err != nil:
		return Finding{Name: "sandbox probe", Detail: err.Error()}
	case code != 0:
		return Finding{Name: "sandbox probe", Detail: fmt.Sprintf("/bin/true exited %d inside the sandbox", code)}
	}
	return Finding{Name: "sandbox probe", OK: true, Detail: "user, mount, pid, ipc, uts and network namespaces, mounts, Landlock, no capabilities and seccomp all work"}
}
