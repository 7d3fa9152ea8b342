package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestLinkedProtections: a protected path that is a link, one reached
// through a linked directory, and the links inside a protected directory
// down to linkScanDepth that lead out of it each give their target under
// the rule of the path; links that stay inside, lead deeper than the
// scan, lead nowhere, or lead to a tree holding the working directory or
// a writable tree give nothing, and neither do rules of the user's.
func TestLinkedProtections(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(files ...string) {
		for _, f := range files {
			p := filepath.Join(base, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ln := func(target, link string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	mk("dot/bashrc", "dot/claude/settings.json", "dot/hook.sh", "dot/deep.sh", "dot/user.txt", "home/.claude/inner.json", "dot/config/git/config")
	must(t, os.MkdirAll(filepath.Join(base, "dot/hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "ws/sub"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "cache"), 0o755))
	ln("../dot/bashrc", "home/.bashrc")                                               // the protected path a link
	ln(filepath.Join(base, "dot/claude/settings.json"), "home/.claude/settings.json") // a link inside, absolute
	ln("../../../dot/hook.sh", "home/.claude/hooks/pre.sh")                           // depth 2
	ln("../../../../dot/deep.sh", "home/.claude/a/b/deep.sh")                         // depth 3: past the scan
	ln("inner.json", "home/.claude/settings.local.json")                              // stays inside
	ln("../dot/missing", "home/.claude/gone")                                         // leads nowhere
	ln("../../dot/hooks", "home/.claude/commands")                                    // a directory
	ln("../../ws", "home/.claude/project")                                            // the workspace
	ln("../dot/config", "home/.config")                                               // a directory on the way
	ln("../../cache", "home/.claude/cachelink")                                       // a writable tree
	ln("../dot/user.txt", "home/user.txt")                                            // a rule of the user's
	rule := func(p, key string) policy.Rule {
		return policy.Rule{Pattern: filepath.Join(base, p), Key: key, Origin: "always protected: " + key}
	}
	p := &policy.Policy{Dir: filepath.Join(base, "ws/sub"), Write: []policy.Rule{{Pattern: base + "/cache"}}, DenyWrite: []policy.Rule{
		rule("home/.bashrc", "mandatory.shellStartup"),
		rule("home/.claude", "mandatory.agentHooks"),
		rule("home/.config/git", "mandatory.gitUserConfig"),
		rule("home/user.txt", "filesystem.denyWrite"),
		rule("home/.missing", "mandatory.shellStartup"),
	}}
	got := map[string]string{}
	for _, l := range LinkedProtections(p) {
		got[l.Path] = l.Key + " " + l.Link
	}
	want := map[string]string{
		base + "/dot/bashrc":               "mandatory.shellStartup " + base + "/home/.bashrc",
		base + "/dot/claude/settings.json": "mandatory.agentHooks " + base + "/home/.claude/settings.json",
		base + "/dot/hook.sh":              "mandatory.agentHooks " + base + "/home/.claude/hooks/pre.sh",
		base + "/dot/hooks":                "mandatory.agentHooks " + base + "/home/.claude/commands",
		base + "/dot/config/git":           "mandatory.gitUserConfig " + base + "/home/.config/git",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected target %s (%s)", k, got[k])
		}
	}
	pol := &policy.Policy{}
	pol.ProtectLinked(LinkedProtections(p))
	if !slices.ContainsFunc(pol.DenyWrite, func(r policy.Rule) bool {
		return r.Pattern == base+"/dot/bashrc" && r.Key == "mandatory.shellStartup" && !r.Glob
	}) {
		t.Errorf("ProtectLinked: no rule for the target of .bashrc: %+v", pol.DenyWrite)
	}
}
