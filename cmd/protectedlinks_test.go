package cmd

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestCheckLinkedProtections: with the home and a dotfiles tree
// writable, `fence check write` of where a protected link leads (a
// linked ~/.bashrc and ~/.gitconfig, ~/.claude/settings.json and
// ~/.codex/hooks.json linked into a tree the run may write) is denied
// under the rule of the link, as the link itself is, while a file beside
// the targets stays writable.
func TestCheckLinkedProtections(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	home, dot, ws := base+"/home", base+"/dot", base+"/ws"
	for _, f := range []string{dot + "/bashrc", dot + "/gitconfig", dot + "/claude/settings.json", dot + "/codex/hooks.json", dot + "/notes", ws + "/README"} {
		must(t, os.MkdirAll(filepath.Dir(f), 0o755))
		must(t, os.WriteFile(f, []byte("{}\n"), 0o644))
	}
	must(t, os.MkdirAll(home+"/.claude", 0o755))
	must(t, os.MkdirAll(home+"/.codex", 0o755))
	links := map[string]string{
		home + "/.bashrc":               dot + "/bashrc",
		home + "/.gitconfig":            "../dot/gitconfig",
		home + "/.claude/settings.json": dot + "/claude/settings.json",
		home + "/.codex/hooks.json":     "../../dot/codex/hooks.json",
	}
	for link, target := range links {
		must(t, os.Symlink(target, link))
	}
	settings := base + "/policy.jsonc"
	must(t, os.WriteFile(settings, []byte(`{"extends": "code", "filesystem": {"allowWrite": ["~", "`+dot+`"]}}`), 0o644))
	opts := policy.Options{Settings: settings, Dir: ws, Home: home, UserConfigDir: base + "/config/fence"}
	res, err := policy.Load(opts)
	must(t, err)
	pol := compileResolved(res, opts)
	if _, err := prepareOnDisk(pol, res, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		dot + "/bashrc":                 "mandatory.shellStartup",
		home + "/.bashrc":               "mandatory.shellStartup",
		dot + "/gitconfig":              "mandatory.gitUserConfig",
		dot + "/claude/settings.json":   "mandatory.agentHooks",
		home + "/.claude/settings.json": "mandatory.agentHooks",
		dot + "/codex/hooks.json":       "mandatory.agentHooks",
		home + "/.codex/hooks.json":     "mandatory.agentHooks",
	}
	for p, rule := range want {
		d := pol.CheckPath("write", p, sandbox.ResolvePath(p, ws))
		if d.Allowed || d.Rule != rule {
			t.Errorf("check write %s: allowed=%v rule %s, want denied by %s", p, d.Allowed, d.Rule, rule)
		}
	}
	if d := pol.CheckPath("write", dot+"/notes", dot+"/notes"); !d.Allowed {
		t.Errorf("check write %s/notes: denied by %s, want allowed", dot, d.Rule)
	}
}
