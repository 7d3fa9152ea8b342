//go:build linux

package linux

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckLandlock pins the fail-closed rule: a kernel older than the
// plan needs is refused unless --degraded=warn, and then fence says so.
func TestCheckLandlock(t *testing.T) {
	tests := []struct {
		have, need int
		degraded   string
		err, warn  string
	}{
		{7, 1, "refuse", "", ""},
		{6, 6, "refuse", "", ""},
		{5, 6, "refuse", "the kernel's Landlock ABI is 5, and this policy needs 6 (why): refusing to run with weaker enforcement than the policy asks; pass --degraded=warn to run anyway", ""},
		{0, 1, "refuse", "Landlock is not available in this kernel (or disabled at boot) (why): refusing", ""},
		{5, 6, "warn", "", "fence: warning: the kernel's Landlock ABI is 5, and this policy needs 6 (why): running with weaker enforcement\n"},
		{0, 1, "warn", "", "fence: warning: Landlock is not available"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		err := checkLandlock(tt.have, tt.need, []string{"why"}, tt.degraded, &stderr)
		if (err == nil) != (tt.err == "") || err != nil && !strings.HasPrefix(err.Error(), tt.err) {
			t.Errorf("checkLandlock(%d, %d, %s) = %v, want %q", tt.have, tt.need, tt.degraded, err, tt.err)
		}
		if !strings.HasPrefix(stderr.String(), tt.warn) || (tt.warn == "") != (stderr.Len() == 0) {
			t.Errorf("checkLandlock(%d, %d, %s) printed %q, want %q", tt.have, tt.need, tt.degraded, stderr.String(), tt.warn)
		}
	}
}

// TestSeccompProgramAssembles checks that every jump of the filter lands
// inside the program, with and without the socket rule.
func TestSeccompProgramAssembles(t *testing.T) {
	for _, o := range []seccompOptions{{}, {denySockets: true}, {denyMPTCP: true}} {
		prog, err := seccompProgram(o)
		if err != nil {
			t.Fatal(err)
		}
		if last := prog[len(prog)-1]; last.Op != 0x06 { // BPF_RET|BPF_K
			t.Errorf("the program does not end with a return: %+v", last)
		}
		for i, ins := range prog {
			isJump := ins.Op&0x07 == 0x05 // BPF_JMP class
			if isJump && (int(ins.Jt)+i+1 >= len(prog) || int(ins.Jf)+i+1 >= len(prog)) {
				t.Errorf("instruction %d jumps past the end: %+v", i, ins)
			}
		}
	}
}

// TestListenFile checks the sockets the sandbox child opens for the
// proxies: they listen on the address asked (IPv4 and IPv6 loopback),
// they are close-on-exec, and a second one on the same address is
// refused.
func TestListenFile(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		t.Run(host, func(t *testing.T) {
			f, err := listenFile(net.JoinHostPort(host, "0"))
			if host == "::1" && (errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EADDRNOTAVAIL)) {
				t.Skipf("no IPv6 loopback here: %v", err)
			}
			if err != nil {
				t.Fatalf("listenFile(%s): %v", host, err)
			}
			defer f.Close()
			flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
			if err != nil || flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("listener fd flags %#x, %v: want close-on-exec", flags, err)
			}
			sa, err := unix.Getsockname(int(f.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			var port int
			switch sa := sa.(type) {
			case *unix.SockaddrInet4:
				port = sa.Port
			case *unix.SockaddrInet6:
				port = sa.Port
			}
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			l, err := net.FileListener(f)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				if c, err := l.Accept(); err == nil {
					c.Write([]byte("ok"))
					c.Close()
				}
			}()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatalf("dial %s: %v", addr, err)
			}
			got, _ := io.ReadAll(c)
			c.Close()
			if string(got) != "ok" {
				t.Errorf("read %q from %s, want ok", got, addr)
			}
			if g, err := listenFile(addr); !errors.Is(err, unix.EADDRINUSE) {
				if g != nil {
					g.Close()
				}
				t.Errorf("second listenFile(%s) = %v, want EADDRINUSE", addr, err)
			}
		})
	}
}
