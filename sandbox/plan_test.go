package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

func TestSanitizeEnv(t *testing.T) {
	env, removed := SanitizeEnv(
		[]string{"PATH=/bin", "LD_PRELOAD=x.so", "DYLD_INSERT_LIBRARIES=y", "GH_TOKEN=t", "KEEP_TOKEN=k", "AWS_SECRET_ACCESS_KEY=s", "FENCE_SANDBOX=0", "HOME=/h"},
		[]string{"*_TOKEN", "AWS_*"}, []string{"KEEP_TOKEN"})
	if want := []string{"PATH=/bin", "KEEP_TOKEN=k", "HOME=/h", "FENCE_SANDBOX=1"}; !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
	if want := []string{"AWS_SECRET_ACCESS_KEY", "DYLD_INSERT_LIBRARIES", "GH_TOKEN", "LD_PRELOAD"}; !slices.Equal(removed, want) {
		t.Errorf("removed = %q, want %q", removed, want)
	}
}

// mktree makes files (and directories, for names ending in "/") under a
// new temporary root and returns it.
func mktree(t *testing.T, names ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, n := range names {
		p := filepath.Join(root, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func plan(t *testing.T, dir, home string, fs policy.Filesystem) *Plan {
	t.Helper()
	pol := policy.Compile(policy.Config{Filesystem: fs}, policy.Env{Dir: dir, Home: home})
	p, err := NewPlan(pol, Options{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewPlanMounts(t *testing.T) {
	root := mktree(t, "home/.bashrc", "ws/src/a.go", "ws/.env", "ws/keys/SERVER.PEM", "ws/vendor/", "ws/.git/hooks/", "ws/out/")
	dir, home := root+"/ws", root+"/home"
	p := plan(t, dir, home, policy.Filesystem{
		AllowWrite: []string{".", "vendor/x", "out"},
		DenyWrite:  []string{"vendor"},
		DenyRead:   []string{"**/*.pem", "keys", ".env"},
	})
	var binds []string
	for _, b := range p.Mounts.Binds {
		binds = append(binds, fmt.Sprintf("%v %s", b.Write, strings.TrimPrefix(b.Path, root)))
	}
	// Parents before children; the write under a denyWrite is dropped;
	// protected paths are read-only on top of the writable workspace, and
	// .git, on the way to its hooks, is pinned.
	want := []string{"true /ws", "true /ws/.git", "true /ws/out", "false /ws/vendor", "false /ws/.git/hooks"}
	if under(home, "/tmp") {
		// A home below /tmp is bound into the private /tmp (reads are open).
		want = append([]string{"false /home"}, want...)
	}
	if !slices.Equal(binds, want) {
		t.Errorf("binds =\n  %s\nwant\n  %s", strings.Join(binds, "\n  "), strings.Join(want, "\n  "))
	}
	var masks []string
	for _, m := range p.Mounts.Masks {
		if strings.HasPrefix(m.Path, root) { // not the host's unix sockets
			masks = append(masks, fmt.Sprintf("%v %s", m.Dir, strings.TrimPrefix(m.Path, root)))
		}
	}
	// keys/ covers SERVER.PEM, which the glob matched without regard to case.
	if want := []string{"false /ws/.env", "true /ws/keys"}; !slices.Equal(masks, want) {
		t.Errorf("masks = %q, want %q", masks, want)
	}
	if !p.Mounts.PrivateTmp {
		t.Error("/tmp is not private")
	}
}

func TestNewPlanWatchesMissingProtectedPaths(t *testing.T) {
	root := mktree(t, "home/", "ws/")
	// Every path fence always protects that the command could create is
	// moved aside if it does; a path the config denies is only reported;
	// a path no writable tree holds cannot be created, and is not watched.
	for _, tt := range []struct {
		write   []string
		watched []string
		not     []string
	}{
		{[]string{"."}, []string{"/ws/.mcp.json", "/ws/fence.jsonc"}, []string{"/fence.json", "/home/.bashrc"}},
		{[]string{".", "~"}, []string{"/ws/.mcp.json", "/home/.bashrc", "/home/.config/git"}, []string{"/fence.json"}},
	} {
		p := plan(t, root+"/ws", root+"/home", policy.Filesystem{AllowWrite: tt.write, DenyWrite: []string{"notes"}})
		for _, path := range tt.watched {
			i := slices.IndexFunc(p.Watch, func(w Watch) bool { return w.Path == root+path })
			if i < 0 || !p.Watch[i].Quarantine {
				t.Errorf("allowWrite %q: Watch has no %s with quarantine", tt.write, path)
			}
		}
		for _, path := range append(tt.not, "/ws/notes") {
			if slices.ContainsFunc(p.Watch, func(w Watch) bool { return w.Path == root+path }) {
				t.Errorf("allowWrite %q: %s is watched", tt.write, path)
			}
		}
	}
}

// TestNewPlanProtectedLinkIntoWritable: a protected file outside every
// writable tree that is a link into one (~/.gitconfig kept in a writable
// cache) has its target protected.
func TestNewPlanProtectedLinkIntoWritable(t *testing.T) {
	root := mktree(t, "home/.cache/dots/gitconfig", "ws/")
	if err := os.Symlink(".cache/dots/gitconfig", root+"/home/.gitconfig"); err != nil {
		t.Fatal(err)
	}
	p := plan(t, root+"/ws", root+"/home", policy.Filesystem{AllowWrite: []string{".", "~/.cache"}})
	if !slices.ContainsFunc(p.Mounts.Binds, func(b Bind) bool { return b.Path == root+"/home/.cache/dots/gitconfig" && !b.Write }) {
		t.Errorf("the target of ~/.gitconfig in the writable cache is not read-only: %+v", p.Mounts.Binds)
	}
}

func TestNewPlanLandlock(t *testing.T) {
	root := mktree(t, "home/", "ws/", "tools/bin/")
	p := plan(t, root+"/ws", root+"/home", policy.Filesystem{DefaultDenyRead: true, AllowExecute: []string{"../tools/bin"}, AllowWrite: []string{"."}})
	got := map[string]string{}
	for _, r := range p.Landlock.Rules {
		got[r.Path] = r.Access
	}
	for path, access := range map[string]string{"/usr": "read", root + "/ws": "write", root + "/tools/bin": "exec", "/tmp": "write", "/dev": "dev"} {
		if got[path] != access {
			t.Errorf("Landlock access for %s = %q, want %q", path, got[path], access)
		}
	}
	if got["/"] != "" || got[root+"/home"] != "" {
		t.Errorf("defaultDenyRead still grants / or home: %v", got)
	}
	if p.Landlock.MinABI != 1 {
		t.Errorf("MinABI = %d, want 1", p.Landlock.MinABI)
	}
}

// TestGlobBudget: a deny glob the budget cuts short makes the plan
// refuse, naming the rule, where the walk stopped and the key that raises
// the budget; an allow glob cut short only grants less, with a warning.
func TestGlobBudget(t *testing.T) {
	var names []string
	for i := range 600 {
		names = append(names, fmt.Sprintf("ws/d%d/f.txt", i))
	}
	root := mktree(t, names...)
	env := policy.Env{Dir: root + "/ws", Home: root}
	deny := policy.Compile(policy.Config{Filesystem: policy.Filesystem{DenyRead: []string{"**/*.pem"}}}, env)
	_, err := NewPlan(deny, Options{Argv: []string{"true"}, GlobBudget: time.Nanosecond})
	var be *BudgetError
	if !errors.As(err, &be) || be.Rule != `filesystem.denyRead "**/*.pem"` || !strings.HasPrefix(be.Stopped, root+"/ws") ||
		!strings.Contains(err.Error(), "filesystem.globBudgetMs") {
		t.Errorf("deny glob cut short: err = %v, want a BudgetError naming the rule, the tree and filesystem.globBudgetMs", err)
	}
	allow := policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowRead: []string{"**/*.txt"}, DefaultDenyRead: true}}, env)
	p, err := NewPlan(allow, Options{Argv: []string{"true"}, GlobBudget: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Globs, func(g GlobReport) bool { return g.Rule == `filesystem.allowRead "**/*.txt"` })
	if i < 0 || !p.Globs[i].Cut || !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, `filesystem.allowRead "**/*.txt": the paths it did not reach get no access from it`)
	}) {
		t.Errorf("globs %+v, warnings %q: want the allow walk reported as cut short", p.Globs, p.Warnings)
	}
	deny.GlobBudgetMs = 60000
	if _, err := NewPlan(deny, Options{Argv: []string{"true"}}); err != nil {
		t.Errorf("with filesystem.globBudgetMs raised: %v", err)
	}
}

func TestCarve(t *testing.T) {
	root := mktree(t, "a/secret", "a/ok", "a/deep/x", "b/y", "c")
	if err := os.Symlink(root+"/a", root+"/link"); err != nil {
		t.Fatal(err)
	}
	got := carve(root, []string{root + "/a/secret"})
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], root)
	}
	slices.Sort(got)
	// The denied file gets nothing, its siblings and cousins their own
	// rule, and the symlink none (a rule on it would grant its target).
	if want := []string{"/a/deep", "/a/ok", "/b", "/c"}; !slices.Equal(got, want) {
		t.Errorf("carve = %q, want %q", got, want)
	}
	if got := carve(root+"/a", []string{root}); got != nil {
		t.Errorf("carve of a denied tree = %q, want nothing", got)
	}
}

func TestLiteralPrefix(t *testing.T) {
	for in, want := range map[string]string{"/w/**/.env": "/w", "/h/.ssh/id_*": "/h/.ssh", "/a/b": "/a/b", "/*.pem": "/", "/w/[a-z]/x": "/w"} {
		if got := literalPrefix(in); got != want {
			t.Errorf("literalPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
