//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planCachePolicy makes the whole home writable, ~/.cache with it, as
// the agents' templates make ~/.cache.
const planCachePolicy = `{"filesystem": {"allowWrite": [".", "~"]}}`

// planCacheScript tries, from inside, to reach the key the plan cache's
// entries are sealed with (the escape helper's keyctl search in the
// user keyring), and rewrites the cache's entry (KEY), which the home's
// write access lets it where the cache is not write-protected (the
// Landlock-only engine).
const planCacheScript = `c=$HOME/.cache/fence/plans
./escape | grep '^keyctl-plan-cache:'
{ head -c 200 $c/KEY > $c/KEY.cut && mv $c/KEY.cut $c/KEY; } 2>/dev/null && echo forged || echo refused
`

// planCacheEntry runs until the cache holds an entry, and returns its
// name.
func planCacheEntry(t *testing.T, w *world) string {
	t.Helper()
	for range 3 { // the first run records the trees it may write, and does not keep its plan
		check(t, w.fence(t, "", nil, "--", "true"), 0, "", "")
	}
	names, _ := filepath.Glob(filepath.Join(w.home, ".cache/fence/plans/[0-9a-f]*"))
	if len(names) == 0 {
		t.Skip("no plan cache entry after three runs (no user keyring here?)")
	}
	return filepath.Base(names[0])
}

// TestPlanCacheSealed: under a policy that makes the home writable, the
// command cannot reach the key the plan cache's entries are sealed with
// (seccomp refuses keyctl), nor rewrite an entry (mandatory.planCache):
// the next run takes it.
func TestPlanCacheSealed(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, planCachePolicy)
			key := planCacheEntry(t, w)
			check(t, w.fence(t, "", nil, "-c", strings.ReplaceAll(planCacheScript, "KEY", key)), 0, "^keyctl-plan-cache: EPERM\nrefused\n$", "")
			check(t, w.fence(t, "", nil, "plan"), 0, "", `plan cache: hit`)
		})
	}
}

// TestPlanCacheSealedLandlockOnly: the same with Landlock alone, which
// lets the command rewrite the entry: the next run ignores it, and plans
// afresh.
func TestPlanCacheSealedLandlockOnly(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to turn user namespaces off in a namespace of its own")
	}
	w := newWorld(t, os.Getuid(), planCachePolicy)
	key := planCacheEntry(t, w)
	check(t, w.withoutUserNS(t, "-c", strings.ReplaceAll(planCacheScript, "KEY", key)), 0, "^keyctl-plan-cache: EPERM\nforged\n$", "")
	check(t, w.fence(t, "", nil, "plan"), 0, "", `plan cache: miss: entry ignored`)
}
