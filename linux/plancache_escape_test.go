//go:build linux

package linux_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// planCacheAttacks are what a command tries on the plan cache from
// inside, each printed as "done NAME" or "refused NAME": write, make,
// rename and delete an entry (KEY), and put links to the victim
// directory (VICTIM) in place of plans/ and of fence/.
var planCacheAttacks = []struct{ name, script string }{
	{"write", `echo x > $p/KEY`},
	{"create", `echo x > $p/` + strings.Repeat("7", 64)},
	{"rename", `mv $p/KEY $p/KEY.away`},
	{"delete", `rm $p/KEY`},
	{"plans-link", `mv $p $c/plans.away && ln -s VICTIM $p`},
	{"fence-link", `mv $c $HOME/.cache/fence.away && ln -s VICTIM $c`},
}

// planCacheAttackScript is planCacheAttacks as one shell script.
func planCacheAttackScript(key, victim string) string {
	var b strings.Builder
	b.WriteString("c=$HOME/.cache/fence; p=$c/plans\n")
	for _, a := range planCacheAttacks {
		s := strings.NewReplacer("KEY", key, "VICTIM", victim).Replace(a.script)
		fmt.Fprintf(&b, "if { %s; } 2>/dev/null; then echo 'done %s'; else echo 'refused %s'; fi\n", s, a.name, a.name)
	}
	return b.String()
}

// plantVictim fills the directory the attacks' links lead to with files
// named as entries, older than any, that the sandbox cannot write.
func plantVictim(t *testing.T, w *world) string {
	t.Helper()
	victim := filepath.Join(w.outside, "victim")
	must(t, os.Mkdir(victim, 0o700))
	old := time.Unix(1577836800, 0)
	for i := range 100 {
		p := filepath.Join(victim, fmt.Sprintf("%064x", 1000+i))
		must(t, os.WriteFile(p, []byte("victim\n"), 0o600))
		must(t, os.Chtimes(p, old, old))
		must(t, os.Lchown(p, w.uid, w.uid))
	}
	must(t, os.Lchown(victim, w.uid, w.uid))
	return victim
}

// checkVictim asserts that nothing in the victim directory was touched.
func checkVictim(t *testing.T, victim string) {
	t.Helper()
	names, err := os.ReadDir(victim)
	if err != nil || len(names) != 100 {
		t.Fatalf("the victim directory holds %d of its 100 files (%v)", len(names), err)
	}
}

// TestPlanCacheWriteProtected: under a policy that makes the home (and
// ~/.cache) writable, the namespace engine keeps the plan cache
// read-only (mandatory.planCache, which fence check names): every
// attack is refused; and later runs, which keep and prune entries, touch
// nothing outside the cache.
func TestPlanCacheWriteProtected(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, planCachePolicy)
			victim := plantVictim(t, w)
			key := planCacheEntry(t, w)
			r := w.fence(t, "", nil, "-c", planCacheAttackScript(key, victim))
			for _, a := range planCacheAttacks {
				if !strings.Contains(r.stdout, "refused "+a.name+"\n") {
					t.Errorf("the command could %s:\n%s\n%s", a.name, r.stdout, r.stderr)
				}
			}
			for _, p := range []string{"fence", "fence/plans", "fence/plans/" + key} {
				check(t, w.fence(t, "", nil, "check", "write", filepath.Join(w.home, ".cache", p)), 1, `denied write .*: mandatory\.planCache`, "")
			}
			for range 3 {
				check(t, w.fence(t, "", []string{"FENCE_TEST_RUN=" + fmt.Sprint(time.Now().UnixNano())}, "--", "true"), 0, "", "")
			}
			checkVictim(t, victim)
			check(t, w.fence(t, "", nil, "plan"), 0, "", `plan cache: hit`)
		})
	}
}

// TestPlanCacheWriteProtectedLandlockOnly: with Landlock alone the
// cache is writable where ~/.cache is (as sandbox.WeakerFor says), and
// the attacks may succeed; later runs still touch nothing outside the
// cache: fence follows no link there and removes only its own entries.
func TestPlanCacheWriteProtectedLandlockOnly(t *testing.T) {
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, planCachePolicy)
			victim := plantVictim(t, w)
			for range 3 {
				w.landlockOnly(t, u, "--", "true")
			}
			names, _ := filepath.Glob(filepath.Join(w.home, ".cache/fence/plans/[0-9a-f]*"))
			if len(names) == 0 {
				t.Skip("no plan cache entry after three runs (no user keyring here?)")
			}
			r := w.landlockOnly(t, u, "-c", planCacheAttackScript(filepath.Base(names[0]), victim))
			if !strings.Contains(r.stdout, "done fence-link\n") {
				t.Errorf("the command could not put a link in place of the cache (the engine says it cannot keep it out):\n%s\n%s", r.stdout, r.stderr)
			}
			for i := range 3 {
				w.landlockOnly(t, u, "--", "true")
				w.fence(t, "", []string{"FENCE_TEST_RUN=" + fmt.Sprint(i)}, "--", "true")
			}
			checkVictim(t, victim)
		})
	}
}
