package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

type showOptions struct {
	policy    *policyFlags
	jsonChain bool
	effective bool
	json      bool
}

func newConfigShowCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	o := &showOptions{policy: pf}
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the resolved policy (JSON on stdout, resolution chain on stderr)",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return o.run(stdout, stderr) },
	}
	c.Flags().BoolVar(&o.jsonChain, "json-chain", false, "also print the chain as a JSON array on stderr")
	c.Flags().BoolVar(&o.effective, "effective", false, "print the policy as enforced: fence's defaults and protections included, paths absolute")
	c.Flags().BoolVar(&o.json, "json", false, "with --effective, mark each entry with its rule and source")
	return c
}

func (o *showOptions) run(stdout, stderr io.Writer) error {
	if o.json && !o.effective {
		return errors.New("--json goes with --effective (plain config show prints JSON already)")
	}
	res, opts, problems, err := o.policy.loadUntrusted()
	if err != nil {
		return err
	}
	// Before the chain, on lines of their own: an agent extension reads
	// the chain's lines, and the JSON chain is the last line.
	for _, p := range problems {
		fmt.Fprintf(stderr, "fence: warning: %s; a run here refuses it until you trust it with: %s\n", describeProblem(p), trustCommand([]policy.TrustProblem{p}))
	}
	for _, n := range []string{legacyNote(res, opts), wslNote(res)} {
		if n != "" {
			fmt.Fprintln(stderr, n)
		}
	}
	out := res.Config.JSON()
	if o.effective {
		// As a run would enforce it: links resolved, and the control
		// files of the repositories on disk protected.
		pol := compileResolved(res, opts)
		if _, err := prepareOnDisk(pol, res, opts, stderr); err != nil {
			return err
		}
		out = pol.Effective().JSON(o.json)
	}
	if _, err := stdout.Write(out); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	// The chain as the configs name it; --effective, which shows what
	// each template adds, names the templates' own steps too, as the
	// JSON chain always does.
	chain := res.Chain.Named()
	if o.effective {
		chain = res.Chain
	}
	io.WriteString(stderr, chain.String())
	if o.jsonChain {
		b, err := json.Marshal(res.Chain)
		if err != nil {
			return fmt.Errorf("encode chain: %w", err)
		}
		fmt.Fprintf(stderr, "%s\n", b)
	}
	return nil
}
