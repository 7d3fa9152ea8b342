//go:build linux

package linux

import (
	"bytes"
	"errors"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
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

// BenchmarkProxyHandover measures what the proxies add to a sandbox's
// start: two listening sockets made in the init, passed to the
// supervisor over the status socket, and served.
func BenchmarkProxyHandover(b *testing.B) {
	plan := &sandbox.Plan{Proxy: &sandbox.Proxy{}}
	for b.Loop() {
		sup, init, err := statusPair()
		if err != nil {
			b.Fatal(err)
		}
		ls, err := proxyListeners(plan.Proxy)
		if err != nil {
			b.Fatal(err)
		}
		fd, _ := unix.Dup(int(init.Fd())) // sendStatus closes it, as the init's fd 4
		init.Close()
		if err := sendStatus(fd, statusOK, ls, false); err != nil {
			b.Fatal(err)
		}
		status, files := readStatus(sup)
		if status != statusOK || len(files) != 2 {
			b.Fatalf("status %q with %d files", status, len(files))
		}
		serveProxies(plan, nil, fileListeners(plan.Proxy, files), io.Discard)()
		sup.Close()
	}
}

// TestListenFile checks the sockets the init opens for the proxies: they
// listen on the address asked (IPv4 and IPv6 loopback), they are
// close-on-exec, and a second one on the same address is refused.
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

// TestWireForInit checks what the init is sent: the plan without what
// only people and the supervisor use, everything else as it was, and the
// supervisor's own plan untouched.
func TestWireForInit(t *testing.T) {
	full := func() *wire {
		return &wire{
			Plan: &sandbox.Plan{
				Argv: []string{"make"}, Dir: "/w", UID: 1000, GID: 1000, Network: "none",
				EnvRemoved: []string{"GH_TOKEN"},
				Proxy: &sandbox.Proxy{
					HTTPPort: 3128, SOCKSPort: 1080,
					AllowedDomains: []string{"example.com"}, DeniedDomains: []string{"evil.example"},
					LocalPorts: []int{5432}, SSH: policy.SSHPolicy{Enabled: true, AllowedHosts: []string{"git.example"}},
					Forwards: []sandbox.Forward{{HostAddr: "127.0.0.1", Port: 8080}},
				},
				Mounts:    sandbox.Mounts{PrivateTmp: true, Masks: []sandbox.Mask{{Path: "/w/.env", Why: "denyRead"}}},
				Seccomp:   []string{"ptrace: EPERM"},
				Degraded:  "refuse",
				KeepFDs:   []int{3},
				Globs:     []sandbox.GlobReport{{Rule: "**/.env", Matches: 1}},
				Warnings:  []string{"a warning"},
				Watch:     []sandbox.Watch{{Path: "/w/.mcp.json"}},
				Worktrees: []sandbox.WorktreeWatch{{CommonDir: "/w/.git"}},
				Gitlinks:  []sandbox.GitlinkWatch{{WorkTree: "/w"}},
			},
			Env:        []string{"PATH=/usr/bin"},
			Namespaces: true,
		}
	}
	w := full()
	got := w.forInit()
	if !reflect.DeepEqual(w, full()) {
		t.Errorf("forInit changed the supervisor's wire: %+v", w.Plan)
	}
	want := full()
	want.Plan.EnvRemoved, want.Plan.Seccomp, want.Plan.Globs, want.Plan.Warnings, want.Plan.Watch, want.Plan.Worktrees, want.Plan.Gitlinks = nil, nil, nil, nil, nil, nil, nil
	want.Plan.Proxy.AllowedDomains, want.Plan.Proxy.DeniedDomains, want.Plan.Proxy.SSH = nil, nil, policy.SSHPolicy{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("forInit:\n got %+v\n     %+v\nwant %+v\n     %+v", got.Plan, got.Plan.Proxy, want.Plan, want.Plan.Proxy)
	}
}
