package cmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/sandbox"
)

// keyOf is the cache key of a run with these flags and, set on top of
// the test's environment, env.
func keyOf(t *testing.T, flags []string, env ...string) string {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var stderr strings.Builder
	o := &runOptions{policy: &policyFlags{stderr: &stderr}, stderr: &stderr, up: upstreamFlags{stdout: io.Discard}}
	root := rootFor(o, io.Discard, &stderr)
	if err := root.ParseFlags(flags); err != nil {
		t.Fatal(err)
	}
	key := planCacheKey(root.Flags())
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		os.Unsetenv(k)
	}
	return key
}

// TestPlanCacheKeyUnambiguous holds pairs of runs whose flags and
// environment once hashed alike (a list flag's values ran on into the
// next flag, or into the environment) to different keys.
func TestPlanCacheKeyUnambiguous(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		bEnv []string
	}{
		{"a list's values and the next flag",
			[]string{"--deny-domain", "example.org", "--deny-domain", "flag", "--deny-domain", "deny-read", "--deny-domain", "secret.txt"},
			[]string{"--deny-domain", "example.org", "--deny-read", "secret.txt"}, nil},
		{"a list's values and the environment",
			[]string{"--deny-domain", "example.org", "--deny-domain", "env", "--deny-domain", "0FENCE_KEY_TEST=1"},
			[]string{"--deny-domain", "example.org"}, []string{"0FENCE_KEY_TEST=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := keyOf(t, tt.a), keyOf(t, tt.b, tt.bEnv...)
			if a == b {
				t.Errorf("%q and %q (with %q) have the same key", tt.a, tt.b, tt.bEnv)
			}
		})
	}
}

// TestPlanCacheKeyDeny runs with a deny, after a run whose flags once
// had the same key kept its plan: the run plans afresh, with the deny.
func TestPlanCacheKeyDeny(t *testing.T) {
	w := newCacheWorld(t)
	a := []string{"--deny-domain", "example.org", "--deny-domain", "flag", "--deny-domain", "deny-read", "--deny-domain", "secret.txt"}
	b := []string{"--deny-domain", "example.org", "--deny-read", "secret.txt"}
	w.warm(a...)
	r := w.plan(b...)
	if r.hit {
		t.Fatalf("the run with --deny-read took the plan of %q: %s", a, r.why)
	}
	if diff, ok := w.matchesFresh(r, b...); !ok {
		t.Fatalf("the plan is not a fresh one:\n%s", diff)
	}
}

// TestPlanCommandPrintsCached has `fence plan` say hit and print the
// plan a run would take from the cache: the entry's plan is marked, and
// the mark is in what it prints.
func TestPlanCommandPrintsCached(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	key := planCacheKey(pflag.NewFlagSet("none", pflag.ContinueOnError))
	file := filepath.Join(planCacheDir(), key)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := sealKey(false)
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeEntry(b, key, secret)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := sandbox.UnmarshalPlanData(e.Plan)
	if err != nil {
		t.Fatal(err)
	}
	const mark = "/the-cached-plan"
	plan.Mounts.Masks = append(plan.Mounts.Masks, sandbox.Mask{Path: mark, Why: "a mark"})
	if e.Plan, err = plan.MarshalData(); err != nil {
		t.Fatal(err)
	}
	if b, err = encodeEntry(e, secret); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	if code := Main([]string{"plan"}, &out, &errOut); code != 0 {
		t.Fatalf("fence plan: %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "plan cache: hit") || !strings.Contains(out.String(), mark) {
		t.Fatalf("fence plan says %q, and its plan has the cached one's mark: %v", errOut.String(), strings.Contains(out.String(), mark))
	}
}
