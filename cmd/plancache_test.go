package cmd

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy/inputs"
	"github.com/fence-sandbox/fence/sandbox"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cacheWorld is a home, a user cache and a git workspace of a test's
// own, with a trusted project config that extends a file beside it, a
// deny rule for a program, a glob deny and a directory of its own on
// PATH. Runs start in ws/a/b.
type cacheWorld struct {
	t                  *testing.T
	home, ws, dir, bin string
}

const cacheWorldConfig = `{
  // the project's policy
  "extends": "./base.jsonc",
  "filesystem": {"allowWrite": ["."], "denyRead": ["~/secrets/*.key"]}
}
`

func newCacheWorld(t *testing.T) *cacheWorld {
	if _, err := sealKey(true); err != nil {
		t.Skipf("no plan cache here: %v", err)
	}
	home := t.TempDir()
	w := &cacheWorld{t: t, home: home, ws: filepath.Join(home, "ws"), bin: filepath.Join(home, "bin")}
	w.dir = filepath.Join(w.ws, "a", "b")
	for _, d := range []string{w.dir, w.bin, filepath.Join(home, "secrets")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("PATH", w.bin+":/usr/bin:/bin")
	t.Setenv(planCacheOff, "")
	w.write("ws/fence.jsonc", cacheWorldConfig)
	w.write("ws/base.jsonc", `{"command": {"deny": ["frobnicate"]}}`)
	if out, err := exec.Command("git", "init", "-q", w.ws).CombinedOutput(); err != nil {
		t.Skipf("git init: %v: %s", err, out)
	}
	w.trust()
	t.Chdir(w.dir)
	return w
}

// write writes a file below the home.
func (w *cacheWorld) write(rel, content string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.home, rel), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// trust records the project config as trusted, as `fence config trust`.
func (w *cacheWorld) trust() {
	w.t.Helper()
	var out, errOut strings.Builder
	if code := Main([]string{"config", "trust", filepath.Join(w.ws, "fence.jsonc")}, &out, &errOut); code != 0 {
		w.t.Fatalf("config trust: %d: %s", code, errOut.String())
	}
}

// cacheRun is how one run planned: its plan as JSON with its
// environment, whether it took the cache's, and why.
type cacheRun struct {
	plan string
	err  string
	hit  bool
	why  string
}

// plan loads and plans `fence FLAGS -- true` through the plan cache, as
// a run does, without running anything.
func (w *cacheWorld) plan(flags ...string) cacheRun {
	w.t.Helper()
	return planThroughCache(w.t, true, flags...)
}

// planThroughCache plans as plan does; with text, the plan is printed
// into the result.
func planThroughCache(tb testing.TB, text bool, flags ...string) cacheRun {
	inputs.SetOwnDir("", nil) // as in a fresh process
	var stderr strings.Builder
	o := &runOptions{policy: &policyFlags{stderr: &stderr}, stderr: &stderr, up: upstreamFlags{stdout: io.Discard}}
	root := rootFor(o, io.Discard, &stderr)
	var r cacheRun
	root.RunE = func(c *cobra.Command, args []string) error {
		o.flags = c.Flags()
		cache := newPlanCache(o.flags, o.noPlanCache, o.up.shell)
		defer cache.drop()
		l, err := o.load(args, cache)
		if cache != nil {
			r.why = cache.why
		}
		if err != nil {
			return err
		}
		r.hit = l.plan != nil
		popts, _, err := o.planOptions(args, l.pol, l.us)
		if err != nil {
			return err
		}
		plan, err := o.planRun(cache, l, popts)
		if err != nil {
			return err
		}
		if text {
			r.plan = planText(tb, plan)
		}
		if cache != nil && !r.hit {
			r.why += "; " + cache.why
		}
		return nil
	}
	root.SetArgs(append(flags, "--", "true"))
	if _, err := root.ExecuteC(); err != nil {
		r.err = err.Error()
	}
	return r
}

// planText is a plan as JSON, its environment included, with empty
// objects and lists left out: the cache's encoding keeps an empty list
// as none, which means the same to every reader of a plan.
func planText(t testing.TB, plan *sandbox.Plan) string {
	b, err := json.Marshal(struct {
		Plan *sandbox.Plan
		Env  []string
	}{plan, plan.Env})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	b, err = json.MarshalIndent(dropEmpty(v), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dropEmpty removes the empty objects and lists of a decoded JSON value.
func dropEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = dropEmpty(e)
			switch y := x[k].(type) {
			case map[string]any:
				if len(y) == 0 {
					delete(x, k)
				}
			case []any:
				if len(y) == 0 {
					delete(x, k)
				}
			case nil:
				delete(x, k)
			}
		}
	case []any:
		for i := range x {
			x[i] = dropEmpty(x[i])
		}
	}
	return v
}

// fresh is the plan of a run that neither takes nor keeps a cached one.
func (w *cacheWorld) fresh(flags ...string) cacheRun {
	return w.plan(append([]string{"--no-plan-cache"}, flags...)...)
}

// warm runs until a run takes the cached plan (a first run records the
// trees it may write, a plan made while the disk changed is not kept,
// and other processes change the host too: the sockets of other tests
// come and go), then asserts that it matches a fresh plan.
func (w *cacheWorld) warm(flags ...string) {
	w.t.Helper()
	var whys []string
	for range 6 {
		r := w.plan(flags...)
		if r.err != "" {
			w.t.Fatalf("run: %s", r.err)
		}
		if r.hit {
			if diff, ok := w.matchesFresh(r, flags...); !ok {
				w.t.Fatalf("the cached plan is not the fresh one:\n%s", diff)
			}
			return
		}
		whys = append(whys, r.why)
	}
	w.t.Fatalf("no run took the cached plan: %q", whys)
}

// matchesFresh compares r with a fresh plan. Other processes change the
// host too (the sockets of other tests come and go): when the two
// differ, another pair of runs is made, up to twice, so that only a
// difference that stays fails the test.
func (w *cacheWorld) matchesFresh(r cacheRun, flags ...string) (string, bool) {
	var diff string
	for try := range 3 {
		if try > 0 {
			r = w.plan(flags...)
		}
		f := w.fresh(flags...)
		if r.plan == f.plan && r.err == f.err {
			return "", true
		}
		diff = r.err + " / " + f.err + "\n" + planDiff(r.plan, f.plan)
	}
	return diff, false
}

// TestPlanCacheStale changes each input of planning in turn and asserts
// that the next run plans afresh, and that what it plans (or the error
// it stops with) is what a run without the cache gets.
func TestPlanCacheStale(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tests := []struct {
		name   string
		change func(w *cacheWorld) (flags []string)
	}{
		{"config file content", func(w *cacheWorld) []string {
			w.write("ws/fence.jsonc", strings.Replace(cacheWorldConfig, `"."`, `".", "~/out"`, 1))
			w.trust()
			return nil
		}},
		{"a file of the extends chain", func(w *cacheWorld) []string {
			w.write("ws/base.jsonc", `{"command": {"deny": ["frobnicate", "defrobnicate"]}}`)
			w.trust()
			return nil
		}},
		{"a new fence.jsonc in a parent directory", func(w *cacheWorld) []string {
			w.write("ws/a/fence.jsonc", `{}`)
			return nil
		}},
		{"the trust record", func(w *cacheWorld) []string {
			w.write("ws/a/other.jsonc", `{}`)
			var out, errOut strings.Builder
			if code := Main([]string{"config", "trust", filepath.Join(w.ws, "a", "other.jsonc")}, &out, &errOut); code != 0 {
				w.t.Fatalf("config trust: %s", errOut.String())
			}
			return nil
		}},
		{"the working directory", func(w *cacheWorld) []string {
			w.t.Chdir(filepath.Dir(w.dir))
			return nil
		}},
		{"an environment variable", func(w *cacheWorld) []string {
			w.t.Setenv("FENCE_TEST_VARIABLE", "1")
			return nil
		}},
		{"PATH", func(w *cacheWorld) []string {
			w.t.Setenv("PATH", "/usr/local/bin:"+os.Getenv("PATH"))
			return nil
		}},
		{"a denied program appearing on PATH", func(w *cacheWorld) []string {
			w.write("bin/frobnicate", "#!/bin/sh\n")
			os.Chmod(filepath.Join(w.bin, "frobnicate"), 0o755)
			return nil
		}},
		{"a new match of a glob", func(w *cacheWorld) []string {
			w.write("secrets/new.key", "k")
			return nil
		}},
		{"a new host socket", func(w *cacheWorld) []string {
			l, err := net.Listen("unix", filepath.Join(w.dir, "s.sock"))
			if err != nil {
				w.t.Fatal(err)
			}
			w.t.Cleanup(func() { l.Close() })
			return nil
		}},
		{"a protected path appearing", func(w *cacheWorld) []string {
			w.write("ws/a/b/.gitmodules", "")
			return nil
		}},
		{"a git worktree added", func(w *cacheWorld) []string {
			w.write("ws/f", "x")
			for _, args := range [][]string{{"add", "f"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c"}, {"worktree", "add", "-q", filepath.Join(w.home, "wt2")}} {
				if out, err := exec.Command("git", append([]string{"-C", w.ws}, args...)...).CombinedOutput(); err != nil {
					w.t.Fatalf("git %v: %v: %s", args, err, out)
				}
			}
			return nil
		}},
		{"a flag", func(w *cacheWorld) []string {
			return []string{"--allow-read", w.home}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newCacheWorld(t)
			w.warm()
			flags := tt.change(w)
			r := w.plan(flags...)
			if r.hit {
				t.Fatalf("after the change the run took the cached plan (%s)", r.why)
			}
			if diff, ok := w.matchesFresh(r, flags...); !ok {
				t.Fatalf("after the change the plan is not a fresh one:\n%s", diff)
			}
			if r.err == "" {
				w.warm(flags...)
			}
		})
	}
}

// TestPlanCacheIgnoresForeign spoils the entry (or its directory) in
// each way fence must not trust, and asserts that the next run plans
// afresh and, where the directory is sound, replaces the entry.
func TestPlanCacheIgnoresForeign(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	entry := func(w *cacheWorld) string {
		dir := planCacheDir()
		names, err := filepath.Glob(filepath.Join(dir, "[0-9a-f]*"))
		if err != nil || len(names) != 1 {
			t.Fatalf("entries %v, %v; want one", names, err)
		}
		return names[0]
	}
	tests := []struct {
		name     string
		spoil    func(w *cacheWorld, file string)
		replaced bool // the run puts a sound entry in its place
		rootOnly bool
		want     string
	}{
		{"truncated", func(w *cacheWorld, f string) { os.Truncate(f, 100) }, true, false, "ignored"},
		{"not an entry", func(w *cacheWorld, f string) { os.WriteFile(f, []byte("garbage"), 0o600) }, true, false, "ignored: not an entry of this format"},
		{"another format", func(w *cacheWorld, f string) {
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append([]byte("fence plan cache 0\n"), b[len(planCacheFormat):]...), 0o600)
		}, true, false, "ignored: not an entry of this format"},
		{"a corrupt body", func(w *cacheWorld, f string) {
			b, _ := os.ReadFile(f)
			for i := len(planCacheFormat) + 20; i < len(b); i += 7 {
				b[i] ^= 0x5a
			}
			os.WriteFile(f, b, 0o600)
		}, true, false, "ignored"},
		{"sealed with another key", func(w *cacheWorld, f string) {
			b, _ := os.ReadFile(f)
			key, err := sealKey(false)
			if err != nil {
				w.t.Fatal(err)
			}
			name := filepath.Base(f)
			plain, err := unseal(key, name, b[len(planCacheFormat):])
			if err != nil {
				w.t.Fatal(err)
			}
			other := make([]byte, planCacheKeySize)
			sealed, _ := seal(other, name, plain)
			os.WriteFile(f, append([]byte(planCacheFormat), sealed...), 0o600)
		}, true, false, "ignored: not sealed with this user's plan cache key"},
		{"another key's entry", func(w *cacheWorld, f string) {
			b, _ := os.ReadFile(f)
			os.Rename(f, f+".away")
			w.t.Setenv("FENCE_TEST_OTHER_KEY", "1")
			os.WriteFile(filepath.Join(filepath.Dir(f), planCacheKey(pflag.NewFlagSet("none", pflag.ContinueOnError))), b, 0o600)
		}, true, false, "ignored: not sealed with this user's plan cache key"}, // the name is sealed in
		{"a link", func(w *cacheWorld, f string) {
			os.Rename(f, f+".real")
			os.Symlink(f+".real", f)
		}, true, false, "ignored"},
		{"readable by others", func(w *cacheWorld, f string) { os.Chmod(f, 0o644) }, true, false, "ignored: mode 0644 lets other users in"},
		{"owned by another user", func(w *cacheWorld, f string) { os.Chown(f, 65534, 65534) }, true, true, "ignored: owned by uid 65534"},
		{"a directory writable by others", func(w *cacheWorld, f string) { os.Chmod(filepath.Dir(f), 0o777) }, false, false, "not used"},
		{"a directory that is a link", func(w *cacheWorld, f string) {
			dir := filepath.Dir(f)
			os.Rename(dir, dir+".real")
			os.Symlink(dir+".real", dir)
		}, false, false, "not used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rootOnly && os.Geteuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			w := newCacheWorld(t)
			w.warm()
			tt.spoil(w, entry(w))
			r := w.plan()
			if r.hit || !strings.Contains(r.why, tt.want) {
				t.Fatalf("spoilt entry: hit %v, why %q; want a miss saying %q", r.hit, r.why, tt.want)
			}
			if diff, ok := w.matchesFresh(r); r.err != "" || !ok {
				t.Fatalf("spoilt entry: the run's plan is not a fresh one (err %q):\n%s", r.err, diff)
			}
			if tt.replaced {
				w.warm() // the spoilt entry was replaced by a sound one
			} else if again := w.plan(); again.hit {
				t.Fatalf("the run after took a cached plan (%s) from a cache it may not use", again.why)
			}
		})
	}
}

// planDiff lists the lines of a that b lacks (-) and those of b that a
// lacks (+).
func planDiff(a, b string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if ca[l] > cb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if cb[l] > ca[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// BenchmarkPlanCache measures loading and planning `fence -t code --
// true` in this repository: fresh, and taken from the cache (the lookup,
// the check of every read the entry noted, the decoding).
func BenchmarkPlanCache(b *testing.B) {
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	b.Setenv(planCacheOff, "")
	b.Chdir(repo)
	for _, c := range []struct {
		name  string
		flags []string
	}{{"fresh", []string{"--no-plan-cache", "-t", "code"}}, {"hit", []string{"-t", "code"}}, {"hit-default", nil}} {
		b.Run(c.name, func(b *testing.B) {
			for range 3 {
				planThroughCache(b, false, c.flags...)
			}
			for b.Loop() {
				r := planThroughCache(b, false, c.flags...)
				if r.err != "" || r.hit != (c.name != "fresh") {
					b.Fatalf("hit %v (%s), err %q", r.hit, r.why, r.err)
				}
			}
		})
	}
}

// TestPackReads: the packed reads unpack to the same observations, empty
// strings and long ones included, and a cut copy is refused.
func TestPackReads(t *testing.T) {
	obs := []inputs.Observation{
		{Op: "lstat", Path: "/home/u/.ssh", Seen: "error 2"},
		{Op: "", Path: "", Seen: ""},
		{Op: "read", Path: "/p/" + strings.Repeat("x", 300), Seen: "stamp 40755 0:0 1.2"},
	}
	b := packReads(obs)
	got, err := unpackReads(b)
	if err != nil || !slices.Equal(got, obs) {
		t.Fatalf("unpackReads(packReads(%v)) = %v, %v", obs, got, err)
	}
	for _, n := range []int{1, len(b) / 2, len(b) - 1} {
		if got, err := unpackReads(b[:n]); err == nil {
			t.Errorf("reads cut to %d bytes unpack to %v, want an error", n, got)
		}
	}
	if got, err := unpackReads(nil); err != nil || len(got) != 0 {
		t.Errorf("no reads unpack to %v, %v", got, err)
	}
}
