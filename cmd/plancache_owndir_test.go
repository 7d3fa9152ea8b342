package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanCacheOwnDir plans with a deny whose glob walks the cache
// directory. Such a plan is taken from the cache (the entries a run
// writes are left out of what it noted, at the check as when noting),
// but a directory named as an entry is not: a file made below it is
// seen, and the next run plans afresh, denying it.
func TestPlanCacheOwnDir(t *testing.T) {
	w := newCacheWorld(t)
	flags := []string{"--deny-read", "~/.cache/**/token"}
	w.warm(flags...)
	sub := filepath.Join(planCacheDir(), entryName(5))
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	w.warm(flags...)
	token := filepath.Join(sub, "token")
	if err := os.WriteFile(token, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.plan(flags...)
	if r.hit {
		t.Fatalf("a file made in a directory named as an entry left the cached plan standing: %s", r.why)
	}
	if !strings.Contains(r.plan, token) {
		t.Errorf("the plan does not deny %s:\n%s", token, r.plan)
	}
	if diff, ok := w.matchesFresh(r, flags...); !ok {
		t.Fatalf("the plan is not a fresh one:\n%s", diff)
	}
}
