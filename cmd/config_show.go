package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

type showOptions struct {
	policy    *policyFlags
	jsonChain bool
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
	return c
}

func (o *showOptions) run(stdout, stderr io.Writer) error {
	res, _, err := o.policy.load()
	if err != nil {
		return err
	}
	if _, err := stdout.Write(res.Config.JSON()); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	io.WriteString(stderr, res.Chain.String())
	if o.jsonChain {
		b, err := json.Marshal(res.Chain)
		if err != nil {
			return fmt.Errorf("encode chain: %w", err)
		}
		fmt.Fprintf(stderr, "%s\n", b)
	}
	return nil
}
