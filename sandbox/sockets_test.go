package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestSocketPath(t *testing.T) {
	for _, tt := range []struct {
		line, want string
	}{
		{"0000000000000000: 00000002 00000000 00010000 0001 01  1657 /run/systemd/notify", "/run/systemd/notify"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 4504942 /tmp/tmux-0/default", "/tmp/tmux-0/default"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 /tmp/with space/s", "/tmp/with space/s"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 /run//a/../b", "/run/b"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 @/tmp/.X11-unix/X0", ""}, // abstract
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 relative.sock", ""},      // bound by a relative path
		{"0000000000000000: 00000003 00000000 00000000 0001 03  1657", ""},                 // unnamed
		{"", ""},
	} {
		got, ok := socketPath(tt.line)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("socketPath(%q) = %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
}

// TestHostSocketsFromTable gives HostSockets a table naming a real
// socket, a regular file (a path with a newline in it could make a line
// claim one), a socket by a symlinked directory, and a missing path: only
// the sockets come back, by their canonical paths.
func TestHostSocketsFromTable(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "real.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	must(t, os.WriteFile(filepath.Join(dir, "passwd"), nil, 0o644))
	must(t, os.Symlink(dir, filepath.Join(dir, "link")))
	table := strings.Join([]string{
		"Num       RefCount Protocol Flags    Type St Inode Path",
		"0000000000000000: 00000002 00000000 00010000 0001 01 1 " + filepath.Join(dir, "link", "real.sock"),
		"0000000000000000: 00000002 00000000 00010000 0001 01 2 " + filepath.Join(dir, "passwd"),
		"0000000000000000: 00000002 00000000 00010000 0001 01 3 " + filepath.Join(dir, "missing.sock"),
	}, "\n")
	f := filepath.Join(t.TempDir(), "unix")
	must(t, os.WriteFile(f, []byte(table), 0o644))
	defer func(p string, roots []string) { ProcNetUnix, SocketRoots = p, roots }(ProcNetUnix, SocketRoots)
	ProcNetUnix, SocketRoots = f, nil
	real, err := filepath.EvalSymlinks(sock)
	must(t, err)
	if got := HostSockets(nil); !slices.Equal(got, []string{real}) {
		t.Errorf("HostSockets = %q, want %q", got, real)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHostSockets reads this machine's /proc/net/unix and walks
// SocketRoots, as every run does at start.
func BenchmarkHostSockets(b *testing.B) {
	for b.Loop() {
		HostSockets(os.Environ())
	}
}

// BenchmarkHostSockets200 reads a table of 200 bound sockets (a busy
// desktop), each checked on disk.
func BenchmarkHostSockets200(b *testing.B) {
	dir := b.TempDir()
	lines := []string{"Num       RefCount Protocol Flags    Type St Inode Path"}
	for i := range 200 {
		p := filepath.Join(dir, strconv.Itoa(i)+".sock")
		l, err := net.Listen("unix", p)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		lines = append(lines, "0000000000000000: 00000002 00000000 00010000 0001 01 1 "+p, "0000000000000000: 00000003 00000000 00000000 0001 03 2")
	}
	f := filepath.Join(b.TempDir(), "unix")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		b.Fatal(err)
	}
	defer func(p string) { ProcNetUnix = p }(ProcNetUnix)
	ProcNetUnix = f
	for b.Loop() {
		if n := len(HostSockets(nil)); n != 200 {
			b.Fatalf("found %d sockets, want 200", n)
		}
	}
}
