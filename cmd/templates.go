package cmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/policy"
)

func newTemplatesCmd(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "templates",
		Short: "List the builtin templates",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			for _, t := range policy.Templates() {
				fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Summary)
			}
			return tw.Flush()
		},
	}
	c.AddCommand(&cobra.Command{
		Use:   "show NAME",
		Short: "Print a builtin template",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			t, ok := policy.LookupTemplate(args[0])
			if !ok {
				return fmt.Errorf("unknown template %q: see \"fence templates\"", args[0])
			}
			_, err := stdout.Write(t.Source)
			return err
		},
	})
	return c
}
