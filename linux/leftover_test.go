//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests of this file are the escape suite's classes of what a run
// leaves behind: each attacks from inside, then asserts on what the host
// or the next run finds.

// TestLeftBehindRenamedParent: renaming a parent of a masked or read-only
// path would carry the mount away and leave the name free for a file of
// the command's own. Every directory on the way is pinned, so the rename
// fails, the secret stays where the next run's rule finds it, and the
// next run still cannot read it.
func TestLeftBehindRenamedParent(t *testing.T) {
	const pol = `{"filesystem": {"allowWrite": ["."], "denyRead": ["secrets/inner.txt"]}}`
	attacks := []struct{ name, script string }{
		{"rename the parent of a masked file", `mv secrets s2`},
		{"remove the parent after emptying it", `rm -rf secrets`},
		{"rename .git, hooks and all", `mv .git g2`},
		{"rename the parent's parent", `mkdir -p deep/er && mv deep d2`},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := newWorld(t, u.uid, pol)
				must(t, os.MkdirAll(w.ws+"/deep/er", 0o755))
				must(t, os.WriteFile(w.ws+"/deep/er/key", []byte("DEEP-SECRET\n"), 0o644))
				must(t, os.Lchown(w.ws+"/deep", u.uid, u.uid))
				must(t, os.Lchown(w.ws+"/deep/er", u.uid, u.uid))
				must(t, os.Lchown(w.ws+"/deep/er/key", u.uid, u.uid))
				must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["."], "denyRead": ["secrets/inner.txt", "deep/er/key"]}}`), 0o644))
				r := w.fence(t, "", nil, "-c", a.script+`; mkdir -p secrets .git/hooks deep/er; echo planted > secrets/inner.txt; echo planted > deep/er/key; echo '#!/bin/sh' > .git/hooks/post-checkout`)
				if !strings.Contains(r.stderr, "Device or resource busy") {
					t.Errorf("the attack was not refused by a pinned mount point:\n%s", r.stderr)
				}
				for name, want := range map[string]string{"secrets/inner.txt": "INNER-SECRET\n", "deep/er/key": "DEEP-SECRET\n", ".git/hooks/pre-commit": "#!/bin/sh\n"} {
					if b, err := os.ReadFile(filepath.Join(w.ws, name)); err != nil || string(b) != want {
						t.Errorf("host %s = %q, %v; want it where it was, unchanged", name, b, err)
					}
				}
				if _, err := os.Stat(w.ws + "/.git/hooks/post-checkout"); err == nil {
					t.Errorf("a hook was planted")
				}
				next := w.fence(t, "", nil, "-c", `cat secrets/inner.txt deep/er/key`)
				check(t, next, 1, "", `secrets/inner.txt: Permission denied`)
				if strings.Contains(next.stdout, "SECRET") {
					t.Errorf("the next run read the secret:\n%s", next.stdout)
				}
			})
		}
	}
}

// TestLeftBehindRenamedParentLandlockOnly: without namespaces the parent
// of a denied path gets no Landlock rule of its own (its other entries
// are granted one by one), so it can be neither renamed nor removed.
func TestLeftBehindRenamedParentLandlockOnly(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."], "denyRead": ["secrets/inner.txt"], "denyWrite": [".git"]}}`)
	r := w.withoutUserNS(t, "-c", `mv secrets s2; mv .git g2; rmdir secrets; echo x > secrets/other`)
	check(t, r, 1, "", `(?s)enforcing the policy with Landlock alone.*'secrets'.*Permission denied.*'.git'.*Permission denied.*secrets.*Permission denied`)
	if b, err := os.ReadFile(w.ws + "/secrets/inner.txt"); err != nil || string(b) != "INNER-SECRET\n" {
		t.Errorf("host secrets/inner.txt = %q, %v; want it where it was", b, err)
	}
	if _, err := os.Stat(w.ws + "/.git/config"); err != nil {
		t.Errorf(".git moved: %v", err)
	}
}
