package sandbox

import "strings"

// Commands that run a command given as a string or after operands of
// their own, which the wrappers table (a fixed set of options before the
// command) cannot describe.

// flock judges what flock runs: flock [options] FILE COMMAND [ARGS...],
// or flock [options] FILE -c STRING. A bare descriptor (flock 9) runs
// nothing.
func (f *preflight) flock(args []word, text lazyText, depth int) Verdict {
	rest := skipOpts("wE", "", "--timeout", "--wait", "--conflict-exit-code")(args)
	if len(rest) < 2 {
		return Verdict{}
	}
	rest = rest[1:] // the lock file
	if s := rest[0]; s.literal && (s.text == "-c" || s.text == "--command") {
		return f.runString(rest[1:], text, depth)
	}
	return f.check(rest, text, depth)
}

// script judges what util-linux script runs: its -c or --command
// string (script -qc 'make' /dev/null).
func (f *preflight) script(args []word, text lazyText, depth int) Verdict {
	for i, a := range args {
		switch {
		case !a.literal:
			return f.dynamic(text, "a script option built at run time")
		case a.text == "-c" || a.text == "--command":
			return f.runString(args[i+1:], text, depth)
		case strings.HasPrefix(a.text, "--command="):
			return f.shell(strings.TrimPrefix(a.text, "--command="), text, depth+1)
		case len(a.text) > 1 && a.text[0] == '-' && a.text[1] != '-' && strings.HasSuffix(a.text, "c"):
			return f.runString(args[i+1:], text, depth) // -qc STRING
		}
	}
	return Verdict{}
}

// runString judges the first of args as a shell string.
func (f *preflight) runString(args []word, text lazyText, depth int) Verdict {
	if len(args) == 0 {
		return Verdict{}
	}
	if !args[0].literal {
		return f.dynamic(text, "a command string built at run time")
	}
	return f.shell(args[0].text, text, depth+1)
}
