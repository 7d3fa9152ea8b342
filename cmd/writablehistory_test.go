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
	base := t.TempDir()
	h := historyOf(policy.Options{UserConfigDir: base + "/xdg/fence", Home: base})
	run := func(trees ...string) {
		var pol policy.Policy
		for _, tr := range trees {
			pol.Write = append(pol.Write, policy.Rule{Pattern: tr, Glob: strings.ContainsAny(tr, "*?[{")})
		}
		if err := h.record(&pol); err != nil {
			t.Fatal(err)
		}
	}
	h1, h2, x := base+"/h", base+"/w", base+"/x"
	for _, d := range []string{h1, h2, x} {
		os.Mkdir(d, 0o755)
	}
	run(h1, h2, base+"/gone")
	os.Remove(h2)
	run(h1+"/.cache", x+"/**/y")
	if got, want := h.trees(), []string{h1, x}; !slices.Equal(got, want) {
		t.Errorf("trees = %q, want %q (a tree that is gone is dropped when the record is next written)", got, want)
	}
	for _, d := range []string{base + "/xdg/fence", base + "/.config/fence"} {
		fi, err := os.Stat(d + "/" + historyName)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("record in %s: %v, %v; want one, mode 0600", d, fi, err)
		}
	}
}
