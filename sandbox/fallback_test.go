package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestLandlockDevices: the Landlock-only sandbox grants the harmless
// devices and fence's own terminals, never all of /dev/pts or /dev/shm
// unless the policy passes them through (and /dev/pts brings /dev/ptmx).
func TestLandlockDevices(t *testing.T) {
	minimal := []string{"/dev/full", "/dev/null", "/dev/random", "/dev/tty", "/dev/urandom", "/dev/zero"}
	tests := []struct {
		name      string
		m         Mounts
		terminals []string
		want      []string
	}{
		{"minimal", Mounts{Devices: "minimal"}, nil, minimal},
		{"own terminal", Mounts{Devices: "minimal"}, []string{"/dev/pts/3", "/dev/pts/3"}, append([]string{"/dev/pts/3"}, minimal...)},
		{"passed through", Mounts{Devices: "minimal", DevAllow: []string{"/dev/kvm"}}, nil, append([]string{"/dev/kvm"}, minimal...)},
		{"pts passed through", Mounts{Devices: "minimal", DevAllow: []string{"/dev/pts"}}, nil, append([]string{"/dev/ptmx", "/dev/pts"}, minimal...)},
		{"host", Mounts{Devices: "host"}, []string{"/dev/pts/3"}, []string{"/dev"}},
	}
	for _, tt := range tests {
		got := landlockDevices(tt.m, tt.terminals)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: landlockDevices = %q, want %q", tt.name, got, want)
		}
	}
}

// TestLandlockOnlySockets: the host's sockets the plan's "unix" rules do
// not grant become the plan's only masks, for the supervisor to refuse;
// a socket among the old masks is not carved around.
func TestLandlockOnlySockets(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "host.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	listed := filepath.Join(dir, "listed.sock")
	plan := &Plan{
		Mounts: Mounts{Masks: []Mask{{Path: sock, Why: "a host unix socket"}}},
		Landlock: Landlock{Rules: []LandlockRule{
			{Path: dir, Access: "write", Why: "allowWrite"},
			{Path: listed, Access: "unix", Why: "network.allowUnixSockets"},
		}},
		HostSockets: []string{sock, listed},
	}
	ll := landlockOnlyRun(plan, t.TempDir(), nil)
	var masks []string
	for _, m := range ll.Mounts.Masks {
		if !m.Socket {
			t.Errorf("mask %q is not a socket's", m.Path)
		}
		masks = append(masks, m.Path)
	}
	if !slices.Equal(masks, []string{sock}) {
		t.Errorf("masks = %q, want only %q", masks, sock)
	}
	if !slices.ContainsFunc(ll.Landlock.Rules, func(r LandlockRule) bool { return r.Path == dir && r.Access == "write" }) {
		t.Errorf("the socket's directory lost its rule: %+v", ll.Landlock.Rules)
	}
}

// TestLandlockOnlyKeepsOutOfDev: with reads open on "/", no rule of the
// Landlock-only plan reaches into /dev but the devices it grants, so the
// host's other terminals and /dev/shm stay out of reach; devices "host"
// keeps all of /dev.
func TestLandlockOnlyKeepsOutOfDev(t *testing.T) {
	for _, devices := range []string{"minimal", "host"} {
		plan := &Plan{
			Mounts:   Mounts{Devices: devices},
			Landlock: Landlock{Rules: []LandlockRule{{Path: "/", Access: "read", Why: "reads are open"}, {Path: "/dev", Access: "dev", Why: "the sandbox's /dev"}}},
		}
		ll := landlockOnlyRun(plan, "/tmp/fence-tmp-x", []string{"/dev/pts/3"})
		for _, p := range []string{"/dev/pts/7", "/dev/shm/x", "/dev/vcs1", "/dev/null", "/dev/pts/3", "/etc/passwd"} {
			reached := slices.ContainsFunc(ll.Landlock.Rules, func(r LandlockRule) bool { return p == r.Path || under(p, r.Path) })
			want := devices == "host" || !strings.HasPrefix(p, "/dev/") || p == "/dev/null" || p == "/dev/pts/3"
			if reached != want {
				t.Errorf("devices %s: a rule reaches %s: %v, want %v\n%v", devices, p, reached, want, ll.Landlock.Rules)
			}
		}
	}
}

// landlockOnlyRun is plan as the Landlock-only engine runs it, with
// tmpDir as its private TMPDIR and terminals as fence's.
func landlockOnlyRun(plan *Plan, tmpDir string, terminals []string) *Plan {
	plan.LandlockOnly = landlockOnly(plan)
	rt := &Runtime{LandlockOnly: &LandlockOnlyRun{TmpDir: tmpDir, Terminals: terminals}}
	return rt.Plan(plan)
}

// TestLandlockOnlyInPlan: NewPlan derives the Landlock-only engine's
// rules, with the private TMPDIR a placeholder the run fills in, and the
// run neither changes the plan nor keeps the placeholder.
func TestLandlockOnlyInPlan(t *testing.T) {
	root := mktree(t, "ws/secret/key", "ws/src/a.go", "home/")
	pol := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"."}, DenyRead: []string{"secret"}}}, policy.Env{Dir: root + "/ws", Home: root + "/home"})
	p, err := NewPlan(pol, Options{Argv: []string{"true"}, LandlockOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.LandlockOnly == nil {
		t.Fatal("no Landlock-only section in the plan")
	}
	placeholders := 0
	for _, r := range p.LandlockOnly.Rules {
		if r.Kind == KindPrivateTmpDir {
			placeholders++
			if r.Path != TmpDirPlaceholder {
				t.Errorf("the private TMPDIR's rule is %q, want the placeholder", r.Path)
			}
		}
		if r.Path == root+"/ws" || under(root+"/ws/secret/key", r.Path) {
			t.Errorf("a rule grants the tree with the denied path in it: %+v", r)
		}
	}
	if placeholders != 1 {
		t.Errorf("%d rules for the private TMPDIR, want 1", placeholders)
	}
	if l := WithLandlockOnly(&Plan{}); l.LandlockOnly == nil {
		t.Error("WithLandlockOnly derived no section")
	}
	before, err := p.MarshalData()
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{LandlockOnly: &LandlockOnlyRun{TmpDir: "/tmp/fence-tmp-1", Terminals: []string{"/dev/pts/9"}}, Proxies: &HostProxies{HTTPPort: 40001, SOCKSPort: 40002}}
	run := rt.Plan(p)
	after, _ := p.MarshalData()
	if string(before) != string(after) {
		t.Error("Runtime.Plan changed the plan")
	}
	if slices.ContainsFunc(run.Landlock.Rules, func(r LandlockRule) bool { return r.Path == TmpDirPlaceholder }) {
		t.Error("the run kept the placeholder")
	}
	for _, want := range []LandlockRule{{Path: "/tmp/fence-tmp-1", Access: "write"}, {Path: "/dev/pts/9", Access: "dev"}} {
		if !slices.ContainsFunc(run.Landlock.Rules, func(r LandlockRule) bool { return r.Path == want.Path && r.Access == want.Access }) {
			t.Errorf("the run does not grant %s %s", want.Access, want.Path)
		}
	}
	if tmp, _ := LookupEnv(run.Env, "TMPDIR"); tmp != "/tmp/fence-tmp-1" {
		t.Errorf("TMPDIR = %q", tmp)
	}
	if px, _ := LookupEnv(run.Env, "HTTP_PROXY"); px != "http://127.0.0.1:40001" {
		t.Errorf("HTTP_PROXY = %q", px)
	}
	if tcp := run.Landlock.TCP; tcp == nil || !slices.Equal(tcp.Connect[:2], []int{40001, 40002}) {
		t.Errorf("Landlock TCP = %+v, want the proxies' host ports", tcp)
	}
	if run.Proxy.HTTPPort != 40001 || p.Proxy.HTTPPort != policy.DefaultHTTPProxyPort {
		t.Errorf("proxy ports: run %d, plan %d", run.Proxy.HTTPPort, p.Proxy.HTTPPort)
	}
}

// BenchmarkLandlockOnlyPlan is what deriving the Landlock-only engine's
// rules adds to every plan: the code template in this repository.
func BenchmarkLandlockOnlyPlan(b *testing.B) {
	dir, _ := filepath.Abs("..")
	home, _ := os.UserHomeDir()
	r, err := policy.Load(policy.Options{Template: "code", Dir: dir, Home: home, UserConfigDir: filepath.Join(home, ".config")})
	if err != nil {
		b.Fatal(err)
	}
	pol := policy.Compile(r.Config, policy.Env{Dir: dir, Root: dir, Home: home, UserConfigDir: filepath.Join(home, ".config")})
	p, err := NewPlan(pol, Options{Argv: []string{"true"}, Environ: os.Environ(), LandlockOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(p.LandlockOnly.Rules)), "rules")
	for b.Loop() {
		landlockOnly(p)
	}
}
