//go:build linux

package linux

import (
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestBeacon runs the filter on prctl: the beacon option answers with the
// engine's errno, every other option goes to the kernel.
func TestBeacon(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    seccompOptions
		want uint32
	}{
		{"namespace engine", seccompOptions{}, unix.SECCOMP_RET_ERRNO | uint32(beaconNamespaces)},
		{"Landlock-only", seccompOptions{guardModes: true, netGuard: true, filtered: true}, unix.SECCOMP_RET_ERRNO | uint32(beaconLandlockOnly)},
	} {
		vm := filterVM(t, tt.o)
		if got := runFilter(t, vm, unix.SYS_PRCTL, [4]uint32{beaconOption}); got != tt.want {
			t.Errorf("%s: prctl(beacon) = %#x, want %#x", tt.name, got, tt.want)
		}
		if got := runFilter(t, vm, unix.SYS_PRCTL, [4]uint32{unix.PR_SET_NAME}); got != retAllow {
			t.Errorf("%s: prctl(PR_SET_NAME) = %#x, want allowed", tt.name, got)
		}
	}
}

// TestListenerRefusal runs the notification filter on seccomp(): a new
// filter with a listener is refused, one without and other operations go
// to the kernel, and the notified calls are still notified.
func TestListenerRefusal(t *testing.T) {
	raw, err := notifyProgram(notified{exec: true, connect: true, listen: true})
	if err != nil {
		t.Fatal(err)
	}
	prog := make([]bpf.Instruction, len(raw))
	for i, r := range raw {
		prog[i] = r.Disassemble()
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	ebusy := unix.SECCOMP_RET_ERRNO | uint32(unix.EBUSY)
	for _, tt := range []struct {
		name string
		nr   uint32
		args [4]uint32
		want uint32
	}{
		{"a filter with a listener", unix.SYS_SECCOMP, [4]uint32{unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER}, ebusy},
		{"a filter with a listener, on every thread", unix.SYS_SECCOMP, [4]uint32{unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH}, ebusy},
		{"a filter without", unix.SYS_SECCOMP, [4]uint32{unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC}, retAllow},
		{"execve", unix.SYS_EXECVE, [4]uint32{}, unix.SECCOMP_RET_USER_NOTIF},
		{"connect", unix.SYS_CONNECT, [4]uint32{}, unix.SECCOMP_RET_USER_NOTIF},
		{"getpid", unix.SYS_GETPID, [4]uint32{}, retAllow},
	} {
		if got := runFilter(t, vm, tt.nr, tt.args); got != tt.want {
			t.Errorf("%s: %#x, want %#x", tt.name, got, tt.want)
		}
	}
}

// TestProxyPort reads the outer proxies from the environment the outer
// fence sets, and nothing else.
func TestProxyPort(t *testing.T) {
	for _, tt := range []struct {
		v, scheme string
		want      int
	}{
		{"http://127.0.0.1:3128", "http", 3128},
		{"socks5h://127.0.0.1:1080", "socks5h", 1080},
		{"http://127.0.0.1:3128", "socks5h", 0},
		{"http://10.0.0.1:3128", "http", 0},
		{"http://localhost:3128", "http", 0},
		{"http://127.0.0.1", "http", 0},
		{"http://127.0.0.1:0", "http", 0},
		{"", "http", 0},
	} {
		if got := proxyPort(tt.v, tt.scheme); got != tt.want {
			t.Errorf("proxyPort(%q, %q) = %d, want %d", tt.v, tt.scheme, got, tt.want)
		}
	}
}
