//go:build linux

package linux

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

func sockaddrInet(ap netip.AddrPort) []byte {
	if ap.Addr().Is4() {
		b := make([]byte, unix.SizeofSockaddrInet4)
		binary.NativeEndian.PutUint16(b, unix.AF_INET)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a := ap.Addr().As4()
		copy(b[4:], a[:])
		return b
	}
	b := make([]byte, unix.SizeofSockaddrInet6)
	binary.NativeEndian.PutUint16(b, unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a := ap.Addr().As16()
	copy(b[8:], a[:])
	return b
}

func sockaddrUnix(path string, extra int) []byte {
	b := make([]byte, 2, 2+len(path)+extra)
	binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
	b = append(b, path...)
	return append(b, make([]byte, extra)...)
}

// TestJudgeConnect: the Landlock-only engine's decision on a connect()
// address, as the supervisor reads it from the caller's memory. With a
// filtered network only the proxies on 127.0.0.1 and the local ports on
// 127.0.0.1 and ::1 are reachable, however the address is spelled; no
// public or private address is ever dialled to find out.
func TestJudgeConnect(t *testing.T) {
	const proxy, local = 41234, 5432
	filtered := &connectRules{Filtered: true, ProxyPorts: []int{proxy, proxy + 1}, LocalPorts: []int{local}}
	host := &connectRules{}
	ap := func(s string) []byte { return sockaddrInet(netip.MustParseAddrPort(s)) }
	tests := []struct {
		name  string
		rules *connectRules
		addr  []byte
		want  unix.Errno
	}{
		{"proxy on 127.0.0.1", filtered, ap("127.0.0.1:41234"), 0},
		{"second proxy", filtered, ap("127.0.0.1:41235"), 0},
		{"proxy on v4-mapped 127.0.0.1", filtered, ap("[::ffff:127.0.0.1]:41234"), 0},
		{"proxy port on 127.0.0.2", filtered, ap("127.0.0.2:41234"), unix.EACCES},
		{"proxy port on ::1", filtered, ap("[::1]:41234"), unix.EACCES},
		{"proxy port on a public address", filtered, ap("203.0.113.5:41234"), unix.EACCES},
		{"proxy port on v4-mapped public", filtered, ap("[::ffff:203.0.113.5]:41234"), unix.EACCES},
		{"proxy port on v4-compatible loopback", filtered, ap("[::127.0.0.1]:41234"), unix.EACCES},
		{"proxy port on a private address", filtered, ap("10.0.0.1:41234"), unix.EACCES},
		{"proxy port on the metadata address", filtered, ap("169.254.169.254:41234"), unix.EACCES},
		{"proxy port on 0.0.0.0", filtered, ap("0.0.0.0:41234"), unix.EACCES},
		{"proxy port on ::", filtered, ap("[::]:41234"), unix.EACCES},
		{"proxy port on the DNS stub", filtered, ap("127.0.0.53:41234"), unix.EACCES},
		{"local port on 127.0.0.1", filtered, ap("127.0.0.1:5432"), 0},
		{"local port on ::1", filtered, ap("[::1]:5432"), 0},
		{"local port on 127.0.0.2", filtered, ap("127.0.0.2:5432"), unix.EACCES},
		{"local port elsewhere", filtered, ap("198.51.100.7:5432"), unix.EACCES},
		{"other loopback port", filtered, ap("127.0.0.1:8080"), unix.EACCES},
		{"host network, anywhere", host, ap("203.0.113.5:8080"), 0},
		{"unspec (disconnect)", filtered, []byte{unix.AF_UNSPEC, 0, 0, 0}, 0},
		{"netlink", filtered, []byte{unix.AF_NETLINK, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
		{"vsock", filtered, []byte{unix.AF_VSOCK, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, unix.EACCES},
		{"vsock, host network", host, []byte{unix.AF_VSOCK, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, unix.EACCES},
		{"abstract unix (judged by its listener)", filtered, sockaddrUnix("\x00fence-test", 0), 0},
		{"abstract unix, host network", host, sockaddrUnix("\x00/tmp/.X11-unix/X0", 0), 0},
		{"unix path", filtered, sockaddrUnix("/tmp/s", 1), 0},
		{"short inet", filtered, ap("127.0.0.1:41234")[:8], unix.EINVAL},
		{"short inet6", filtered, ap("[::1]:5432")[:20], unix.EINVAL},
		{"unnamed unix", filtered, sockaddrUnix("", 0), unix.EINVAL},
		{"no family", filtered, []byte{unix.AF_INET}, unix.EINVAL},
	}
	for _, tt := range tests {
		d, err := parseSockaddr(tt.addr)
		got := errnoOf(err)
		if err == nil {
			got = tt.rules.judge(d).Errno
		}
		if got != tt.want {
			t.Errorf("%s: judge(%v) = %v, want %v", tt.name, d, got, tt.want)
		}
	}
}

// TestParseSockaddrUnix: a unix path ends at its first NUL or at the
// address's length, as the kernel reads it.
func TestParseSockaddrUnix(t *testing.T) {
	tests := []struct {
		addr     []byte
		path     string
		abstract bool
	}{
		{sockaddrUnix("/tmp/s", 1), "/tmp/s", false},
		{sockaddrUnix("/tmp/s", 0), "/tmp/s", false},
		{sockaddrUnix("/tmp/s\x00/../other", 0), "/tmp/s", false},
		{sockaddrUnix("rel/s", 3), "rel/s", false},
		{sockaddrUnix("\x00name", 0), "name", true},
		{sockaddrUnix("\x00name\x00more", 0), "name\x00more", true},
	}
	for _, tt := range tests {
		d, err := parseSockaddr(tt.addr)
		if err != nil || d.Path != tt.path || d.Abstract != tt.abstract {
			t.Errorf("parseSockaddr(%q) = %q abstract %v, %v; want %q abstract %v", tt.addr, d.Path, d.Abstract, err, tt.path, tt.abstract)
		}
	}
}

// TestJudgeSocket: a unix socket is refused by its identity, whatever
// path reached it, when it is one of the host's the policy does not list.
func TestJudgeSocket(t *testing.T) {
	r := &connectRules{HostSockets: map[fileKey]string{{1, 2}: "/tmp/tmux-0/default"}}
	if v := r.judgeSocket(fileKey{1, 2}); v.Errno != unix.EACCES || v.Rule != "network.allowUnixSockets" {
		t.Errorf("judgeSocket(host socket) = %+v, want EACCES by network.allowUnixSockets", v)
	}
	if v := r.judgeSocket(fileKey{1, 3}); v.Errno != 0 {
		t.Errorf("judgeSocket(another socket) = %+v, want allowed", v)
	}
}

// TestListedSockets: network.allowUnixSockets's paths grant the socket
// itself and what lies below a directory, nothing beside it.
func TestListedSockets(t *testing.T) {
	r := &connectRules{Listed: []string{"/run/user/1000/bus", "/tmp/app"}}
	for p, want := range map[string]bool{
		"/run/user/1000/bus": true, "/run/user/1000/bus2": false, "/tmp/app/s": true, "/tmp/apps": false, "/tmp/tmux-0/default": false,
	} {
		if got := r.listed(p); got != want {
			t.Errorf("listed(%q) = %v, want %v", p, got, want)
		}
	}
	if all := (&connectRules{Listed: []string{"/"}}); !all.listed("/tmp/tmux-0/default") {
		t.Errorf("allowAllUnixSockets does not list every socket")
	}
}
