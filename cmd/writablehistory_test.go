package cmd

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestWritableHistory: a run records the trees it may write, once, and a
// tree below a recorded one adds nothing; the record is the user's alone.
func TestWritableHistory(t *testing.T) {
	h := writableHistory{t.TempDir() + "/fence"}
	run := func(trees ...string) {
		var pol policy.Policy
		for _, tr := range trees {
			pol.Write = append(pol.Write, policy.Rule{Pattern: tr, Glob: strings.ContainsAny(tr, "*?[{")})
		}
		if err := h.record(&pol); err != nil {
			t.Fatal(err)
		}
	}
	run("/h", "/w")
	run("/h/.cache", "/w", "/x/**/y")
	if got, want := h.trees(), []string{"/h", "/w", "/x"}; !slices.Equal(got, want) {
		t.Errorf("trees = %q, want %q", got, want)
	}
	fi, err := os.Stat(h.path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record %v, %v: want mode 0600", fi, err)
	}
}
