package cmd

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestPolicyDirRefused: --policy-dir needs -c and an absolute directory.
func TestPolicyDirRefused(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/f"
	must(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy-dir", dir, "--", "true"}, "--policy-dir goes with -c"},
		{[]string{"--policy-dir", "rel", "-c", "true"}, "not an absolute path"},
		{[]string{"--policy-dir", dir + "/missing", "-c", "true"}, "not a directory"},
		{[]string{"--policy-dir", file, "-c", "true"}, "not a directory"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(c.args, &stdout, &stderr); code != 125 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("fence %q: exit %d, %q; want 125 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestAnchorPolicy: the policy is found from the directory named, and
// the command is led back to where fence was started, unless that is
// the same directory.
func TestAnchorPolicy(t *testing.T) {
	here, there := t.TempDir(), t.TempDir()
	t.Chdir(here)
	o := &runOptions{policy: &policyFlags{}, shell: "ls", policyDir: there}
	must(t, o.anchorPolicy())
	if o.policy.dir != there || o.shell != "cd -- "+singleQuote(here)+" || exit 1\nls" {
		t.Errorf("dir %q, shell %q", o.policy.dir, o.shell)
	}
	opts, err := o.policy.options()
	must(t, err)
	if opts.Dir != there {
		t.Errorf("the policy is loaded from %s, want %s", opts.Dir, there)
	}
	o = &runOptions{policy: &policyFlags{}, shell: "ls", policyDir: here}
	must(t, o.anchorPolicy())
	if o.shell != "ls" {
		t.Errorf("started in the policy's directory, the command became %q", o.shell)
	}
}
