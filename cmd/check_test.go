package cmd

import (
	"bytes"
	"encoding/json"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestCheckStreamOrder sends one burst large enough to be decided in
// parallel and requires the answers in input order, each the same as
// deciding that query alone with a fresh path resolution.
func TestCheckStreamOrder(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"src/a.go", ".env", "keys/k.pem"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	must(t, os.Symlink(dir+"/keys", dir+"/link"))
	must(t, os.Symlink("/etc", dir+"/src/etc"))
	opts := policy.Options{Template: "code", Dir: dir, Home: "/root", UserConfigDir: "/root/.config/fence"}
	res, err := policy.Load(opts)
	must(t, err)
	pol := compileResolved(res, opts)
	queries := []string{
		`{"access":"read","path":"src/a.go"}`, `{"access":"write","path":".env"}`, `{"access":"read","path":"link/k.pem"}`,
		`{"access":"write","path":"src/etc/passwd"}`, `{"access":"exec","path":"/usr/bin/env"}`, `{"command":"git push origin"}`,
		`{"url":"https://github.com/x"}`, `{"access":"write","path":"missing/deep/file"}`, `{"access":"read","path":"src/../link"}`,
	}
	var in bytes.Buffer
	var want []string
	for i := range 3000 {
		q := queries[i%len(queries)]
		in.WriteString(q + "\n")
		var qq query
		must(t, json.Unmarshal([]byte(q), &qq))
		d, err := decideAlone(pol, dir, qq)
		must(t, err)
		b, _ := json.Marshal(d)
		want = append(want, string(b))
	}
	var out bytes.Buffer
	denied, err := checkStream(pol, dir, &in, &out)
	must(t, err)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if !denied || len(got) != len(want) {
		t.Fatalf("denied=%v, %d answers, want %d", denied, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answer %d = %s, want %s", i, got[i], want[i])
		}
	}
}

// decideAlone decides one query as if it came alone, resolving its path
// with sandbox.ResolvePath directly.
func decideAlone(pol *policy.Policy, dir string, q query) (policy.Decision, error) {
	if q.Path != "" {
		return pol.CheckPath(q.Access, q.Path, sandbox.ResolvePath(q.Path, dir)), nil
	}
	return decide(pol, newResolver(dir), q)
}

// TestCheckStreamBadLine: the answers before a line that is not a query
// are written; the bad line ends the stream with an error naming it.
func TestCheckStreamBadLine(t *testing.T) {
	pol := policy.Compile(policy.Config{}, policy.Env{Dir: "/w", Home: "/h"})
	var in strings.Builder
	for range 200 {
		in.WriteString(`{"access":"read","path":"/w/a"}` + "\n")
	}
	in.WriteString("not json\n" + `{"access":"read","path":"/w/b"}` + "\n")
	var out bytes.Buffer
	_, err := checkStream(pol, "/w", strings.NewReader(in.String()), &out)
	if err == nil || !strings.Contains(err.Error(), `"not json" is not a query`) {
		t.Errorf("err = %v", err)
	}
	if n := strings.Count(out.String(), "\n"); n != 200 {
		t.Errorf("%d answers written before the bad line, want 200", n)
	}
}

// TestResolverMatchesResolvePath compares the burst resolver with
// sandbox.ResolvePath on links, dangling links, files used as directories
// and missing tails.
func TestResolverMatchesResolvePath(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(dir+"/a/b", 0o755))
	must(t, os.WriteFile(dir+"/a/file", nil, 0o644))
	must(t, os.Symlink("b", dir+"/a/lb"))
	must(t, os.Symlink("/nonexistent/x", dir+"/a/dangling"))
	must(t, os.Symlink("..", dir+"/a/b/up"))
	res := newResolver(dir + "/a")
	for _, p := range []string{
		"b", "lb", "lb/x", "lb/up/file", "dangling", "dangling/y", "file/z", "missing/q/r", "../a/./b/../lb",
		"/", dir, dir + "/a/b/up/lb/up", "b/up/dangling",
	} {
		for range 2 { // the second time from the cache
			if got, want := res.resolve(p), sandbox.ResolvePath(p, dir+"/a"); got != want {
				t.Errorf("resolve(%q) = %q, ResolvePath says %q", p, got, want)
			}
		}
	}
}
