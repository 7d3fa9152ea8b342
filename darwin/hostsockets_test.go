package darwin

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// socketDenies are the profile's denies of op, rendered, joined.
func socketDenies(t *testing.T, p, op string) string {
	t.Helper()
	return strings.Join(filtersOf(checkProfile(t, "host sockets", p), "deny", op), " ")
}

func folded(p string) string { return "(regex " + sbplRegex(literalRegex(p, foldEqual, true)) + ")" }
func foldedExact(p string) string {
	return "(regex " + sbplRegex(literalRegex(p, foldEqual, false)) + ")"
}

// TestHostSocketsClosed: below writable paths, the ssh agent's socket,
// launchd's and the servers' places in /tmp and the container engines'
// in the home stay closed (connect and bind; the agent's file and its
// directories from unlink and rename); a listed socket stays reachable
// without reopening any other socket of its place; the agent is the one
// fence was started with, whatever env rules leave the command; the
// home's places are spelled in /private when the home is below /var.
func TestHostSocketsClosed(t *testing.T) {
	agent := "/private/tmp/com.apple.launchd.AbC/Listeners"
	for _, tc := range []struct {
		name    string
		home    string
		listed  []string
		envDeny bool
		// want are places denied connect and bind; except the listed
		// sockets a deny leaves out.
		want, except []string
	}{
		{name: "none listed", home: "/Users/dev",
			want: []string{folded("/Users/dev/.docker"), folded("/Users/dev/.gnupg"), folded(agent), foldRegex(launchdSockets), foldRegex(tmpServerSockets[0])}},
		{name: "one listed in /tmp and one in the home", home: "/Users/dev", listed: []string{"~/.docker/run/docker.sock", "/tmp/.s.PGSQL.5432"},
			want:   []string{folded("/Users/dev/.docker"), folded(agent), foldRegex(launchdSockets), foldRegex(tmpServerSockets[0])},
			except: []string{`(require-not (remote unix-socket (subpath "/Users/dev/.docker/run/docker.sock")))`, `(require-not (remote unix-socket (subpath "/private/tmp/.s.PGSQL.5432")))`}},
		{name: "env.deny SSH_AUTH_SOCK", home: "/Users/dev", envDeny: true, want: []string{folded(agent), foldRegex(launchdSockets)}},
		{name: "home below /var", home: "/var/root", want: []string{folded("/private/var/root/.docker"), folded(agent)}},
	} {
		c := policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"~", "/tmp"}}, Network: policy.Network{AllowUnixSockets: tc.listed}}
		if tc.envDeny {
			c.Env.Deny = []string{"SSH_AUTH_SOCK"}
		}
		env := testEnv
		env.Home = tc.home
		pol := policy.Compile(c, env)
		plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}, Environ: []string{"HOME=" + tc.home, "SSH_AUTH_SOCK=" + agent}})
		if err != nil {
			t.Fatal(err)
		}
		if tc.envDeny && envValue(plan.Env, "SSH_AUTH_SOCK") != "" {
			t.Fatalf("%s: env.deny left SSH_AUTH_SOCK to the command", tc.name)
		}
		o := testOptions
		o.SSHAuthSock = agent
		in := InputFromPlan(plan, o, testFinder)
		in.HostSockets = nil // the machine's own, found by the plan
		p, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		connect, bind, write, unlink := socketDenies(t, p, "network-outbound"), socketDenies(t, p, "network-bind"), socketDenies(t, p, "file-write*"), socketDenies(t, p, "file-write-unlink")
		for _, f := range tc.want {
			if !strings.Contains(connect, f) || !strings.Contains(bind, f) {
				t.Errorf("%s: %s not denied connect and bind:\n%s", tc.name, f, p)
			}
		}
		for _, e := range tc.except {
			if !strings.Contains(connect, e) {
				t.Errorf("%s: the listed %s is not left out of its place's deny:\n%s", tc.name, e, connect)
			}
		}
		if !strings.Contains(write, folded(agent)) || !strings.Contains(unlink, foldedExact("/private/tmp/com.apple.launchd.AbC")) {
			t.Errorf("%s: the agent's socket or its directory may be removed or renamed:\n%s", tc.name, p)
		}
		// A place denied by name: its sockets may not be moved out of
		// it (rename is a write of the place), nor the place itself.
		for _, f := range tc.want {
			if !strings.Contains(write, f) {
				t.Errorf("%s: a socket of %s may be renamed out of it:\n%s", tc.name, f, write)
			}
		}
		for _, d := range []string{"/private/tmp", darwinPath(tc.home)} {
			if !strings.Contains(unlink, foldedExact(d)) {
				t.Errorf("%s: %s, above a place of host sockets, may be renamed:\n%s", tc.name, d, unlink)
			}
		}
	}
}

// listenUnix binds a unix socket at p, closed at the test's end.
func listenUnix(t *testing.T, p string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// TestSocketScan: the sockets that exist below a writable tree at start
// are closed, each (connect, bind, unlink, and the directories above it),
// but a listed one and the private TMPDIR's; a tree whose walk runs out
// of its budget is closed to every unix socket but the private TMPDIR's
// and the listed ones, with a warning; sockets the command binds later
// elsewhere in a fully walked tree stay open (no deny covers the tree).
func TestSocketScan(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, tmp := filepath.Join(dir, "ws"), filepath.Join(dir, "ws", "fence-tmp")
	host, listed, own := filepath.Join(ws, "a", "tmux-1", "default"), filepath.Join(ws, "db", "pg.sock"), filepath.Join(tmp, "own.sock")
	for _, s := range []string{host, listed, own} {
		listenUnix(t, s)
	}
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{ws}}, Network: policy.Network{AllowUnixSockets: []string{filepath.Dir(listed)}}}, testEnv)
	plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	plan.HostSockets = nil // as on macOS: the scan finds them
	o := testOptions
	o.TmpDir = tmp
	if s := scanSockets([]string{ws}, []string{tmp}, nil); slices.Contains(s.found, darwinPath(own)) || !slices.Contains(s.found, darwinPath(host)) || len(s.cut) != 0 {
		t.Errorf("scan found %v (cut %v): want the host's socket, not the TMPDIR's", s.found, s.cut)
	}
	for _, cut := range []bool{false, true} {
		if cut {
			defer func(n int) { socketScanEntries = n }(socketScanEntries)
			socketScanEntries = 2
		}
		p, warnings, err := ProfileFor(plan, o)
		if err != nil {
			t.Fatal(err)
		}
		connect, write, unlink := socketDenies(t, p, "network-outbound"), socketDenies(t, p, "file-write*"), socketDenies(t, p, "file-write-unlink")
		if !cut {
			if !strings.Contains(connect, folded(darwinPath(host))) || !strings.Contains(write, folded(darwinPath(host))) || !strings.Contains(unlink, foldedExact(darwinPath(filepath.Dir(host)))) {
				t.Errorf("the host's socket %s is not closed:\n%s", host, p)
			}
			for _, s := range []string{listed, own} {
				if strings.Contains(connect, folded(darwinPath(s))) {
					t.Errorf("%s is closed:\n%s", s, connect)
				}
			}
			if strings.Contains(connect, folded(darwinPath(ws))) || len(warnings) != 0 {
				t.Errorf("a fully walked tree is closed whole (%v):\n%s", warnings, connect)
			}
			continue
		}
		want := `(require-all (remote unix-socket ` + folded(darwinPath(ws)) + `) (require-not (remote unix-socket (subpath "` + darwinPath(tmp) + `"))) (require-not (remote unix-socket (subpath "` + darwinPath(filepath.Dir(listed)) + `"))))`
		if !strings.Contains(connect, want) {
			t.Errorf("a tree whose walk was cut is not closed but for the TMPDIR and the listed socket:\n%s", connect)
		}
		wantBind := `(require-all (local unix-socket ` + folded(darwinPath(ws)) + `) (require-not (local unix-socket (subpath "` + darwinPath(tmp) + `"))))`
		if bind := socketDenies(t, p, "network-bind"); !strings.Contains(bind, wantBind) {
			t.Errorf("a socket may be bound below a tree whose walk was cut, outside the TMPDIR:\n%s", bind)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], darwinPath(ws)) || !strings.Contains(p, "; warning: ") {
			t.Errorf("warnings %q, want one naming %s, in the profile too", warnings, ws)
		}
	}
}

// TestHostSocketsKeepDNS: with the host's network, mDNSResponder's socket
// stays reachable even where the writable trees would close it (found at
// start, or below a tree the walk could not finish).
func TestHostSocketsKeepDNS(t *testing.T) {
	in := InputFromPolicy(policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"/var/run"}}, Network: policy.Network{AllowedDomains: []string{"*"}}}, testEnv), testOptions, testFinder)
	in.HostSockets = []string{dnsSocket, "/private/var/run/other.sock"}
	in.SocketScanCut = []string{"/private/var"}
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	connect := socketDenies(t, p, "network-outbound")
	if strings.Contains(connect, folded(dnsSocket)) || !strings.Contains(connect, folded("/private/var/run/other.sock")) ||
		!strings.Contains(connect, `(require-not (remote unix-socket (subpath "`+dnsSocket+`")))`) {
		t.Errorf("mDNSResponder's socket is closed, or another is open:\n%s", connect)
	}
}

// TestSocketScanPrivacyDirs: a walk of the home does not open the
// directories macOS's privacy controls guard (it would ask the user, or
// fail): each is closed to unix sockets instead, with the warning; one a
// writable rule names (or a path below it) is walked.
func TestSocketScanPrivacyDirs(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	desktop, library, src := filepath.Join(home, "Desktop", "a"), filepath.Join(home, "Library", "b"), filepath.Join(home, "src", "c")
	for _, s := range []string{desktop, library, src} {
		listenUnix(t, s)
	}
	for _, tc := range []struct {
		name      string
		write     []string
		found     []string
		cut, open []string
	}{
		{name: "the home", write: []string{home}, found: []string{src}, cut: []string{filepath.Join(home, "Desktop"), filepath.Join(home, "Library")}},
		{name: "the home and its Desktop", write: []string{home, filepath.Join(home, "Desktop")}, found: []string{desktop, src}, cut: []string{filepath.Join(home, "Library")}},
		{name: "a path below Library", write: []string{home, filepath.Join(home, "Library", "x")}, found: []string{library, src}, cut: []string{filepath.Join(home, "Desktop")}},
	} {
		in := Input{Write: mapRules(tc.write), Home: home, ProfileOptions: testOptions}
		in.scanSockets()
		want := mapList(tc.found, darwinPath)
		if !slices.Equal(in.HostSockets, want) || !slices.Equal(in.SocketScanCut, mapList(tc.cut, darwinPath)) {
			t.Errorf("%s: found %v, cut %v; want %v, cut %v", tc.name, in.HostSockets, in.SocketScanCut, want, tc.cut)
		}
	}
}

func mapRules(paths []string) []PathRule {
	out := make([]PathRule, len(paths))
	for i, p := range paths {
		out[i] = PathRule{Pattern: p}
	}
	return out
}

// TestSocketScanOneBudget: the walk's budget is one for all writable
// trees: a tree walked after the budget ran out is closed, not walked
// with a budget of its own.
func TestSocketScanOneBudget(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, s := range []string{"1", "2", "3", "4", "5"} {
		listenUnix(t, filepath.Join(a, s))
	}
	listenUnix(t, filepath.Join(b, "s"))
	defer func(n int) { socketScanEntries = n }(socketScanEntries)
	socketScanEntries = 4
	s := scanSockets([]string{a, b}, nil, nil)
	if !slices.Equal(s.cut, []string{darwinPath(a), darwinPath(b)}) {
		t.Errorf("cut %v (found %v), want both trees", s.cut, s.found)
	}
}
