//go:build linux

package linux_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestLegacyUserConfig: ~/.fence.json, where older fences kept the user
// config, is the policy of a run that finds no other (with a note saying
// where it belongs now), once trusted; a sandbox whose policy makes the
// home writable can neither change it nor leave a ~/.fence.jsonc (which
// would be read before it) behind, and one left there is not read
// without trust.
func TestLegacyUserConfig(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
			mark := filepath.Join(w.outside, "by-legacy")
			legacy := fmt.Sprintf(`{"filesystem": {"allowWrite": [%q]}}`, w.outside)
			w.plant(t, map[string]string{"home/.fence.json": legacy})

			// Discovery, no -s: the legacy file needs trust first (a
			// command with a writable home could have made it), then it is
			// the policy.
			r := w.run(t, nil, filepath.Join(bin, "fence"), "-c", "touch "+mark+" && echo ran")
			check(t, r, 125, `^$`, regexp.QuoteMeta(fmt.Sprintf("fence: error: %q is not trusted", w.home+"/.fence.json")))
			if r := w.run(t, nil, filepath.Join(bin, "fence"), "config", "trust", w.home+"/.fence.json"); r.code != 0 {
				t.Fatalf("trust: %+v", r)
			}
			r = w.run(t, nil, filepath.Join(bin, "fence"), "-c", "touch "+mark+" && echo ran")
			check(t, r, 0, `^ran\n$`, regexp.QuoteMeta("fence: note: "+w.home+"/.fence.json is the user config's old location"))
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("the legacy user config did not apply: %v", err)
			}

			// The sandbox cannot change it, nor plant the .jsonc that
			// discovery would read first.
			widen := `{"filesystem": {"allowWrite": ["/"]}}`
			script := fmt.Sprintf(`printf '%%s' '%[1]s' > ~/.fence.json || echo denied-json; printf '%%s' '%[1]s' > ~/.fence.jsonc && echo wrote-jsonc`, widen)
			r = w.fence(t, "", nil, "-c", script)
			check(t, r, 0, `^denied-json\nwrote-jsonc\n$`, `(?s)\.fence\.json: Read-only file system.*fence: warning: the command created `+regexp.QuoteMeta(w.home)+`/\.fence\.jsonc \(always protected: .*\); fence moved it to `)
			if b, _ := os.ReadFile(w.home + "/.fence.json"); string(b) != legacy {
				t.Errorf("~/.fence.json is now %q", b)
			}
			if _, err := os.Lstat(w.home + "/.fence.jsonc"); err == nil {
				t.Fatal("the command's ~/.fence.jsonc is where the next run reads its user config")
			}

			// One left there all the same (a run started while the first
			// went on, or a fence killed before moving it aside) is not
			// read without trust.
			w.plant(t, map[string]string{"home/.fence.jsonc": widen})
			r = w.run(t, nil, filepath.Join(bin, "fence"), "-c", "echo ran")
			check(t, r, 125, `^$`, regexp.QuoteMeta(fmt.Sprintf("fence: error: %q is not trusted", w.home+"/.fence.jsonc")))
		})
	}
}

// TestLegacyUserConfigLink: a ~/.fence.json that is a link to a file a
// sandbox may write (here the workspace) needs trust too.
func TestLegacyUserConfigLink(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			w.plant(t, map[string]string{"ws/team.json": `{}`})
			must(t, os.Symlink(w.ws+"/team.json", w.home+"/.fence.json"))
			must(t, os.Lchown(w.home+"/.fence.json", u.uid, u.uid))
			r := w.run(t, nil, filepath.Join(bin, "fence"), "-c", "echo ran")
			check(t, r, 125, `^$`, regexp.QuoteMeta(fmt.Sprintf("fence: error: %q is not trusted", w.home+"/.fence.json")))
		})
	}
}
