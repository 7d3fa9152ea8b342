package cmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

type lintOptions struct {
	policy *policyFlags
	strict bool
}

func newConfigLintCmd(pf *policyFlags, stderr io.Writer) *cobra.Command {
	o := &lintOptions{policy: pf}
	c := &cobra.Command{
		Use:   "lint",
		Short: "Warn about rules that probably do not mean what they say",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return o.run(stderr) },
	}
	c.Flags().BoolVar(&o.strict, "strict", false, "exit 1 when there is any warning")
	return c
}

func (o *lintOptions) run(stderr io.Writer) error {
	res, opts, err := o.policy.load()
	if err != nil {
		return err
	}
	warnings := policy.Lint(res, opts.Dir, opts.Home, policy.PathDirs(os.Getenv("PATH"))...)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "fence: warning: %s [%s]\n", w, w.Check)
	}
	if len(warnings) == 0 {
		fmt.Fprintf(stderr, "fence: lint: no warnings (%d configs in the chain)\n", len(res.Chain))
		return nil
	}
	if o.strict {
		return &exitError{code: 1, msg: fmt.Sprintf("lint: %d warnings with --strict", len(warnings))}
	}
	return nil
}
