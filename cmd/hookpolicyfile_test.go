package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestHookPolicyFiles: the hook's -s file is refused, naming the file
// and why, when it or a file it extends lies in a tree an earlier run
// recorded, or in a tree a template makes writable; a file in the user config
// directory, one outside every such tree, and a discovered config (which
// its trust record covers) are taken.
func TestHookPolicyFiles(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	home, cfg, proj := base+"/home", base+"/home/.config/fence", base+"/proj"
	write := func(p, s string) {
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(proj+"/hook.jsonc", `{"extends": "code"}`)
	write(proj+"/base.jsonc", `{"filesystem": {"allowWrite": ["."]}}`)
	write(cfg+"/hook.jsonc", `{"extends": "code"}`)
	write(cfg+"/extends.jsonc", `{"extends": "../../../proj/base.jsonc"}`)
	must(t, os.Symlink(proj+"/hook.jsonc", cfg+"/linked.jsonc"))
	// A file outside every such tree: not below /tmp (where a clone of
	// this repository may be).
	outside, err := os.MkdirTemp("/var/tmp", "fence-policyfile-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(outside) })
	repoFile := filepath.Join(outside, "extends-template.jsonc")
	write(repoFile, `{"extends": "code"}`)
	load := func(settings string) error {
		t.Helper()
		opts := policy.Options{Settings: settings, Dir: proj, Home: home, UserConfigDir: cfg}
		res, err := policy.Load(opts)
		must(t, err)
		return hookPolicyFiles(opts, res)
	}
	for _, tt := range []struct {
		settings, want string // want: "" for taken, else what the error says
	}{
		{proj + "/hook.jsonc", "the hook's policy file " + proj + "/hook.jsonc lies in /tmp, a tree a builtin template makes writable"},
		{cfg + "/hook.jsonc", ""},
		{cfg + "/extends.jsonc", "the hook's policy file " + proj + "/base.jsonc lies in /tmp"},
		{cfg + "/linked.jsonc", "the hook's policy file " + proj + "/hook.jsonc lies in /tmp"},
		{repoFile, ""},
	} {
		err := load(tt.settings)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want it taken", tt.settings, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error with %q", tt.settings, err, tt.want)
		}
	}
	// A tree an earlier run recorded, named as such.
	write(cfg+"/"+historyName, `{"Trees": ["`+filepath.Dir(repoFile)+`"]}`)
	if err := load(repoFile); err == nil || !strings.Contains(err.Error(), "a tree an earlier sandboxed run could write") {
		t.Errorf("%s in a recorded tree: %v", repoFile, err)
	}
	// A discovered config: the trust record's to judge.
	opts := policy.Options{Dir: proj, Home: home, UserConfigDir: cfg}
	if err := hookPolicyFiles(opts, &policy.Resolved{Files: []string{proj + "/fence.jsonc"}}); err != nil {
		t.Errorf("discovered config: %v", err)
	}
}
