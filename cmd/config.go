package cmd

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

func newConfigCmd(pf *policyFlags, stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Show, create and check fence.jsonc policies",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(
		newConfigShowCmd(pf, stdout, stderr),
		newConfigInitCmd(pf, stdout, stderr),
		newConfigLintCmd(pf, stderr),
		newConfigGrantCmd("allow", pf, stderr),
		newConfigGrantCmd("deny", pf, stderr),
		newConfigTrustCmd(pf, stdout, stderr),
		newConfigUntrustCmd(pf, stderr),
		&cobra.Command{
			Use:   "schema",
			Short: "Print the JSON Schema of fence.jsonc",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				_, err := stdout.Write(policy.Schema)
				return err
			},
		},
	)
	return c
}
