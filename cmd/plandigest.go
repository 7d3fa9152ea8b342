package cmd

import (
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/fence-sandbox/fence/sandbox"
)

// planDigest is a digest of the whole plan, its environment included,
// for -d: fence checks after the run that the backend only read it.
func planDigest(plan *sandbox.Plan) string {
	b, err := plan.MarshalData()
	if err != nil {
		return "unencodable: " + err.Error()
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// checkPlanUnchanged says, for -d, whether the run left its plan as
// NewPlan made it (before is planDigest's then); a change is fence's bug.
func checkPlanUnchanged(w io.Writer, before string, plan *sandbox.Plan) {
	if after := planDigest(plan); after != before {
		fmt.Fprintf(w, "fence: warning: the run changed its plan (sha256 %s before, %s after): please report it\n", before, after)
		return
	}
	fmt.Fprintf(w, "fence: debug: plan: unchanged by the run (sha256 %s)\n", before)
}
