package cmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fence-sandbox/fence/linux"
)

func newDoctorCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Report what this kernel lets fence enforce, and what a missing feature costs",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			failed := 0
			for _, f := range linux.Doctor() {
				status := "ok"
				if !f.OK {
					status, failed = "MISSING", failed+1
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, status, f.Detail)
			}
			tw.Flush()
			if failed > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("doctor: %d features missing: fence runs, but enforces less (see above)", failed)}
			}
			return nil
		},
	}
}
