//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"testing"
)

// linkedScript writes, from inside, through each protected link and to
// each target directly.
const linkedScript = `
try() { sh -c "$1" 2>/dev/null && echo "WROTE $2" || echo "denied $2"; }
try 'echo "{}" > ~/.claude/settings.json' claude-link
try 'echo "{}" > ../outside/dot/claude-settings.json' claude-target
try 'echo "{}" > ~/.codex/hooks.json' codex-link
try 'echo "{}" > ../outside/dot/codex-hooks.json' codex-target
try 'echo "touch MARK" >> ~/.bashrc' bashrc-link
try 'echo "touch MARK" >> ../outside/dot/bashrc' bashrc-target
try 'printf "[core]\n\tfsmonitor = x\n" >> ../outside/dot/gitconfig' gitconfig-target
try 'echo ok > ../outside/dot/notes' neighbour
`

// plantDotfiles links ~/.claude/settings.json, ~/.codex/hooks.json,
// ~/.bashrc and ~/.gitconfig into outside/dot, a tree the policy makes
// writable, as a dotfiles manager does.
func (w *world) plantDotfiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{
		"outside/dot/claude-settings.json": `{"hooks": {"PreToolUse": []}}` + "\n",
		"outside/dot/codex-hooks.json":     `{"hooks": {}}` + "\n",
		"outside/dot/bashrc":               "# rc\n",
		"outside/dot/gitconfig":            "[user]\n\tname = u\n",
		"outside/dot/notes":                "",
	}
	w.plant(t, files)
	must(t, os.Remove(w.home+"/.bashrc"))
	for link, target := range map[string]string{
		".claude/settings.json": "../../outside/dot/claude-settings.json",
		".codex/hooks.json":     w.outside + "/dot/codex-hooks.json",
		".bashrc":               "../outside/dot/bashrc",
		".gitconfig":            "../outside/dot/gitconfig",
	} {
		p := filepath.Join(w.home, link)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.Lchown(filepath.Dir(p), w.uid, w.uid))
		must(t, os.Symlink(target, p))
		must(t, os.Lchown(p, w.uid, w.uid))
	}
	return files
}

// checkDotfiles requires every write but the neighbour's to have failed
// and the targets to be as planted.
func (w *world) checkDotfiles(t *testing.T, r result, files map[string]string) {
	t.Helper()
	for _, want := range []string{"denied claude-link", "denied claude-target", "denied codex-link", "denied codex-target",
		"denied bashrc-link", "denied bashrc-target", "denied gitconfig-target", "WROTE neighbour"} {
		if !regexpMatch(`(?m)^`+want+`$`, r.stdout) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
	for name, content := range files {
		if name == "outside/dot/notes" {
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(w.base, name)); string(b) != content {
			t.Errorf("%s changed: %q", name, b)
		}
	}
}

// TestLinkedProtections: settings files kept as symlinks into a dotfiles
// tree the run may write stay read-only both through the link and at
// the target, as root and as uid 65534.
func TestLinkedProtections(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "../outside"]}}`)
			files := w.plantDotfiles(t)
			r := w.fence(t, "", nil, "-c", linkedScript)
			check(t, r, 0, "", "")
			w.checkDotfiles(t, r, files)
		})
	}
}

// TestLinkedProtectionsLandlockOnly is TestLinkedProtections in the
// Landlock-only engine.
func TestLinkedProtectionsLandlockOnly(t *testing.T) {
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, `{"filesystem": {"allowWrite": [".", "../outside"]}}`)
			files := w.plantDotfiles(t)
			r := w.landlockOnly(t, u, "-c", linkedScript)
			if r.code != 0 {
				t.Errorf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			w.checkDotfiles(t, r, files)
		})
	}
}
