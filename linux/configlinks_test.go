//go:build linux

package linux_test

import (
	"os"
	"strings"
	"testing"
)

// TestConfigDirThroughWritableLink: fence reads its user config, trust
// records and writable-tree history through $HOME and
// $XDG_CONFIG_HOME as spelled, so a run that may replace a link on their
// way (a link in /tmp under a rule that shares the host's /tmp) is
// refused before anything runs: it could point the link at a directory
// it filled, and every fence run started meanwhile would trust what it
// planted there. A private /tmp, where the command cannot touch the
// host's link, runs.
func TestConfigDirThroughWritableLink(t *testing.T) {
	tests := []struct {
		name, policy, env string
		code              int
		stdout, stderr    string
	}{
		{"HOME through a link the command may replace", `{"filesystem": {"allowWrite": ["/tmp"]}}`, "HOME", 125, "^$",
			`\$HOME \(/tmp/fence-link-[^)]*\) is reached through the link /tmp/fence-link-\S+, which filesystem.allowWrite "/tmp" \(.*\) lets the command replace`},
		{"XDG_CONFIG_HOME through a link the command may replace", `{"filesystem": {"allowWrite": ["/tmp"]}}`, "XDG_CONFIG_HOME", 125, "^$",
			`the user config directory \(/tmp/fence-link-\S+/fence\) is reached through the link`},
		{"HOME through a link in a private /tmp", `{}`, "HOME", 0, "^ran\n$", ""},
		{"a second link, in a directory the command may write", `{"filesystem": {"allowWrite": ["BASE/d"]}}`, "SECOND", 125, "^$",
			`\$HOME \(/tmp/fence-link-\S+/home\) is reached through the link \S+/d/home, which filesystem.allowWrite "\S+/d" \(.*\) lets the command replace`},
		{"a linked ~/.config in a writable home", `{"filesystem": {"allowWrite": ["~"]}}`, "DOTCONFIG", 125, "^$",
			`the user config directory \(\S+/home/\.config/fence\) is reached through the link \S+/home/\.config, which filesystem.allowWrite "~" \(.*\) lets the command replace`},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorldIn(t, "/tmp", u.uid, "")
				must(t, os.WriteFile(w.settings, []byte(strings.ReplaceAll(tt.policy, "BASE", w.base)), 0o644))
				link, target := tmpLink(t, w.home, u.uid), w.home
				env := []string{tt.env + "=" + link}
				switch tt.env {
				case "XDG_CONFIG_HOME":
					env = []string{"XDG_CONFIG_HOME=" + link + "/.config"}
				case "SECOND": // /tmp/link -> BASE/d, whose home -> the home
					d := w.base + "/d"
					must(t, os.Mkdir(d, 0o755))
					must(t, os.Lchown(d, u.uid, u.uid))
					must(t, os.Remove(link))
					must(t, os.Symlink(d, link))
					must(t, os.Lchown(link, u.uid, u.uid))
					env = []string{"HOME=" + link + "/home"}
					link = d + "/home"
					must(t, os.Symlink(target, link))
					must(t, os.Lchown(link, u.uid, u.uid))
				case "DOTCONFIG": // ~/.config a link to a dotfiles directory
					link, target, env = w.home+"/.config", "dotcfg", nil
					must(t, os.Mkdir(w.home+"/dotcfg", 0o755))
					must(t, os.Lchown(w.home+"/dotcfg", u.uid, u.uid))
					must(t, os.Symlink(target, link))
					must(t, os.Lchown(link, u.uid, u.uid))
				}
				r := w.fence(t, "", env, "-c", "echo ran; ln -sfn /nonexistent "+link)
				check(t, r, tt.code, tt.stdout, tt.stderr)
				if tt.code != 0 {
					if to, err := os.Readlink(link); err != nil || to != target {
						t.Errorf("the link now leads to %q (%v), want %q", to, err, target)
					}
				}
			})
		}
	}
}
