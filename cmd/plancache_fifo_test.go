package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPlanWithFIFOs puts FIFOs where planning reads a file, as a
// sandbox may leave them: a gitfile in the user cache dir and the
// workspace's git config. Planning neither blocks on them, fresh or
// through the cache, nor protects the repository less: the config is
// still named in the plan.
func TestPlanWithFIFOs(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	foo := filepath.Join(w.home, ".cache", "foo")
	if err := os.MkdirAll(foo, 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(w.ws, ".git", "config")
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(foo, ".git"), config} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, flags := range [][]string{nil, {"--no-plan-cache"}} {
		done := make(chan cacheRun, 1)
		go func() { done <- w.plan(flags...) }()
		select {
		case r := <-done:
			if r.err != "" {
				t.Fatalf("plan %q: %s", flags, r.err)
			}
			if !strings.Contains(r.plan, config) {
				t.Errorf("plan %q does not name %s:\n%s", flags, config, r.plan)
			}
		case <-time.After(time.Minute):
			t.Fatalf("plan %q has not returned after a minute", flags)
		}
	}
}
