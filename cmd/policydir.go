package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// --policy-dir DIR loads and applies the policy as a run started in DIR
// would (config discovery, relative rules, the workspace) while the -c
// command runs in the directory fence was started in. The agent hooks
// wrap commands so: the hook judges a call with the policy of the event's
// working directory, and the agent may start the wrapped command
// elsewhere (Codex's workdir, a shell session that has changed directory),
// which must not move the rules.

// anchorPolicy applies --policy-dir: the policy's directory becomes dir,
// and the command is led by a cd back to where fence was started. The
// shell leaves at once when that directory is not there to enter, so no
// part of the command runs elsewhere.
func (o *runOptions) anchorPolicy() error {
	if o.policyDir == "" {
		return nil
	}
	if o.shell == "" {
		return errors.New("--policy-dir goes with -c: the command's directory is entered by the shell that runs it")
	}
	if !filepath.IsAbs(o.policyDir) {
		return fmt.Errorf("--policy-dir %q: not an absolute path", o.policyDir)
	}
	dir := filepath.Clean(o.policyDir)
	if fi, err := inputs.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--policy-dir %s: not a directory", dir)
	}
	here, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("get working directory: %w", err)
	}
	o.policy.dir = dir
	if here != dir {
		o.shell = "cd -- " + singleQuote(here) + " || exit 1\n" + o.shell
	}
	return nil
}
