package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

func TestSocketPath(t *testing.T) {
	for _, tt := range []struct {
		line, want string
	}{
		{"0000000000000000: 00000002 00000000 00010000 0001 01  1657 /run/systemd/notify", "/run/systemd/notify"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 4504942 /tmp/tmux-0/default", "/tmp/tmux-0/default"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 /tmp/with space/s", "/tmp/with space/s"},
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 /run/lnk/../b", "/run/lnk/../b"}, // resolved later, physically
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 @/tmp/.X11-unix/X0", ""},         // abstract
		{"0000000000000000: 00000002 00000000 00010000 0001 01 12 relative.sock", ""},              // bound by a relative path
		{"0000000000000000: 00000003 00000000 00000000 0001 03  1657", ""},                         // unnamed
		{"", ""},
	} {
		got, ok := socketPath(tt.line)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("socketPath(%q) = %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
}

// TestHostSocketsFromTable gives FindHostSockets a table naming: a real
// socket by a symlinked directory; a regular file (a path with a newline
// in it could make a line claim one); a missing path; a dead name whose
// socket was linked into place beside it (ssh's ControlMaster); a path
// through "link/.." (the kernel resolves it physically); a link to a
// socket ($SSH_AUTH_SOCK); and one the user owns without the write bit
// (the command could chmod it). Each socket comes back once, by its
// canonical path.
func TestHostSocketsFromTable(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	listen := func(p string) string {
		t.Helper()
		l, err := net.Listen("unix", p)
		must(t, err)
		t.Cleanup(func() { l.Close() })
		return p
	}
	for _, d := range []string{"a", "b/c", "d", "master"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	real := listen(filepath.Join(dir, "a", "real.sock"))
	must(t, os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")))
	must(t, os.WriteFile(filepath.Join(dir, "passwd"), nil, 0o644))
	tmpName := filepath.Join(dir, "master", "ctl.XXXX")
	listen(tmpName)
	master := filepath.Join(dir, "master", "ctl")
	must(t, os.Link(tmpName, master))
	must(t, os.Remove(tmpName))
	physical := listen(filepath.Join(dir, "b", "phys.sock"))
	must(t, os.Symlink(filepath.Join(dir, "b", "c"), filepath.Join(dir, "d", "up")))
	agent := listen(filepath.Join(dir, "d", "agent.sock"))
	must(t, os.Symlink(agent, filepath.Join(dir, "agent-link")))
	closed := listen(filepath.Join(dir, "d", "closed.sock"))
	must(t, os.Chmod(closed, 0o500))
	row := func(p string) string { return "0000000000000000: 00000002 00000000 00010000 0001 01 1 " + p }
	table := strings.Join([]string{
		"Num       RefCount Protocol Flags    Type St Inode Path",
		row(filepath.Join(dir, "link", "real.sock")),
		row(filepath.Join(dir, "passwd")),
		row(filepath.Join(dir, "missing.sock")),
		row(tmpName),
		row(dir + "/d/up/../phys.sock"), // filepath.Join would clean it
	}, "\n")
	f := filepath.Join(t.TempDir(), "unix")
	must(t, os.WriteFile(f, []byte(table), 0o644))
	defer func(p string, roots []string) { ProcNetUnix, SocketRoots = p, roots }(ProcNetUnix, SocketRoots)
	ProcNetUnix, SocketRoots = f, nil
	got, err := FindHostSockets([]string{"SSH_AUTH_SOCK=" + filepath.Join(dir, "agent-link")}, nil)
	must(t, err)
	want := []string{real, physical, agent, closed, master}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("FindHostSockets =\n%q\nwant\n%q", got, want)
	}
	ProcNetUnix = filepath.Join(dir, "no-such-table")
	if _, err := FindHostSockets(nil, nil); err == nil {
		t.Error("FindHostSockets without the kernel's table: no error")
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
		FindHostSockets(os.Environ(), nil)
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
		if socks, _ := FindHostSockets(nil, nil); len(socks) != 200 {
			b.Fatalf("found %d sockets, want 200", len(socks))
		}
	}
}

// TestTooManySockets fails the plan closed when more host sockets than
// MaxHiddenSockets would need masks, and lets it through once the policy
// lists their directory.
func TestTooManySockets(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for i := range 3 {
		l, err := net.Listen("unix", filepath.Join(dir, strconv.Itoa(i)+".sock"))
		must(t, err)
		defer l.Close()
	}
	table := filepath.Join(t.TempDir(), "unix")
	must(t, os.WriteFile(table, []byte("Num       RefCount Protocol Flags    Type St Inode Path\n0000000000000000: 00000002 00000000 00010000 0001 01 1 "+dir+"/0.sock\n"), 0o644))
	defer func(p string, roots []string, max int) { ProcNetUnix, SocketRoots, MaxHiddenSockets = p, roots, max }(ProcNetUnix, SocketRoots, MaxHiddenSockets)
	ProcNetUnix, SocketRoots, MaxHiddenSockets = table, nil, 2
	for _, tt := range []struct {
		listed []string
		err    string
	}{
		{nil, "the host has 3 unix sockets the command could reach and the policy does not list (most in " + dir + "), more than the 2 fence masks"},
		{[]string{dir}, ""},
	} {
		pol := policy.Compile(policy.Config{Network: policy.Network{AllowUnixSockets: tt.listed}}, policy.Env{Dir: "/", Home: "/nonexistent"})
		_, err := NewPlan(pol, Options{Argv: []string{"true"}})
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("allowUnixSockets %q: NewPlan error %v, want %q", tt.listed, err, tt.err)
		}
	}
}
