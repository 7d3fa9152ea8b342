package cmd

import (
	"fmt"
	"io"

	"github.com/fence-sandbox/fence/policy"
)

// noteRun says, before the command starts, what about its policy a user
// would not expect: a config file that holds nothing (so the builtin
// default applies in its place, as `fence config show` labels it), and
// the findings of `fence config lint` that a run repeats.
func noteRun(stderr io.Writer, res *policy.Resolved, opts policy.Options) {
	if f := res.EmptyConfig(); f != "" {
		fmt.Fprintf(stderr, "fence: note: %s is empty (nothing but whitespace and comments), so the builtin default applies instead: nothing writable, no network\n", f)
	}
	for _, w := range policy.RunWarnings(res, opts.Dir, opts.Home) {
		fmt.Fprintf(stderr, "fence: warning: %s\n", w)
	}
}
