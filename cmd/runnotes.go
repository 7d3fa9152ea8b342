package cmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// noteRun says, before the command starts, what about its policy a user
// would not expect: a config file that holds nothing (so the builtin
// default applies in its place, as `fence config show` labels it), and
// the findings of `fence config lint` that a run repeats.
func noteRun(stderr io.Writer, res *policy.Resolved, opts policy.Options) {
	if f := res.EmptyConfig(); f != "" {
		fmt.Fprintf(stderr, "fence: note: %s is empty (nothing but whitespace and comments), so the builtin default applies instead: nothing writable, no network\n", f)
	}
	for _, n := range []string{legacyNote(res, opts), wslNote(res)} {
		if n != "" {
			fmt.Fprintln(stderr, n)
		}
	}
	for _, w := range policy.RunWarnings(res, opts.Dir, opts.Home) {
		fmt.Fprintf(stderr, "fence: warning: %s\n", w)
	}
}

// legacyNote is the note that the chain read a user config from where
// older fences kept it (~/.fence.jsonc, ~/.fence.json), with the command
// that moves it to the user config dir; "" when it read none.
func legacyNote(res *policy.Resolved, opts policy.Options) string {
	f := res.LegacyUserConfig(opts)
	if f == "" {
		return ""
	}
	to := filepath.Join(opts.UserConfigDir, strings.TrimPrefix(filepath.Base(f), "."))
	return fmt.Sprintf("fence: note: %s is the user config's old location, read only when %s holds none; move it with: mkdir -p %s && mv %s %s",
		f, opts.UserConfigDir, shellQuote(opts.UserConfigDir), shellQuote(f), shellQuote(to))
}

// wslNote is the warning that filesystem.wslInterop is true on a kernel
// that is not WSL's, where fence allows nothing for it; "" otherwise.
func wslNote(res *policy.Resolved) string {
	fs := res.Config.Filesystem
	if fs.WSLInterop == nil || !*fs.WSLInterop || !policy.WSLInteropDeclined(fs, policy.Env{WSL: sandbox.IsWSL()}) {
		return ""
	}
	return "fence: warning: filesystem.wslInterop is true, but this kernel is not WSL's (its release and version name neither Microsoft nor WSL), so fence does not make " + policy.WSLInit + " executable"
}
