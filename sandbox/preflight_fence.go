package sandbox

import "strings"

// A fence run inside the sandbox (fence -c 'git push', fence -s other.json
// -- git push) takes its own policy, which may not hold the outer rules:
// the preflight judges what it runs by the outer policy, as it judges a
// nested shell's string. The nested fence cannot widen the outer sandbox;
// without this it would be a way round the outer command rules.

// FenceValueFlags are fence's flags that take a value as the next word
// (a test in cmd keeps the list whole).
var FenceValueFlags = []string{
	"-s", "--settings", "-t", "--template", "-p", "--port", "--degraded", "--report", "--audit", "--keep-fd",
	"--policy-dir", "--allow-read", "--allow-write", "--deny-read", "--deny-write", "--allow-domain",
	"--deny-domain", "--deny-command", "--mode", "--shell", "--fence-log-file", "--expose-host-path",
	"--expose-host-path-rw", "--timeout", "--limit-cpu", "--limit-as", "--limit-fsize", "--limit-nofile",
	"--limit-nproc", "--limit-tmp", "--limit-shm",
}

// fence judges the command a nested fence runs: every -c string (fence
// runs the last one given; an empty one gives way to the words after
// it) as a shell string, the words after -- or its first operand as a
// command. A flag fence does not know, or one built at run time, is
// judged from every word after it as a possible start of the command,
// which errs towards refusing.
func (f *preflight) fence(args []word, text lazyText, depth int) Verdict {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.literal {
			return f.dynamic(text, "a fence flag built at run time")
		}
		if script, used, ok := fenceScript(args, i); ok {
			if !script.literal {
				return f.dynamic(text, "a fence -c string built at run time")
			}
			if v := f.shell(script.text, text, depth+1); v.Blocked {
				return v
			}
			i += used
			continue
		}
		switch {
		case a.text == "--":
			return f.check(args[i+1:], text, depth)
		case fenceFlagWithValue(a.text):
			i++
		case strings.HasPrefix(a.text, "-"):
			// a boolean flag, or one fence does not know: judge the rest
			// as a command too, in case it takes no value.
			if v := f.check(args[i+1:], text, depth); v.Blocked {
				return v
			}
		default:
			return f.check(args[i:], text, depth)
		}
	}
	return Verdict{}
}

// fenceScript is the -c string that starts at args[i], and how many words
// after args[i] it used: -c STRING, --command STRING, --command=STRING,
// -c=STRING, -cSTRING, or -c ending a cluster of short flags (-dc STRING).
func fenceScript(args []word, i int) (word, int, bool) {
	a := args[i].text
	next := func() (word, int, bool) {
		if i+1 < len(args) {
			return args[i+1], 1, true
		}
		return word{}, 0, false
	}
	switch {
	case a == "--command":
		return next()
	case strings.HasPrefix(a, "--command="):
		return word{text: strings.TrimPrefix(a, "--command="), literal: true}, 0, true
	case len(a) > 1 && a[0] == '-' && a[1] != '-':
		c := strings.IndexByte(a, 'c')
		if c < 0 || strings.ContainsAny(a[1:c], "stp=") { // a value flag before c takes the rest
			return word{}, 0, false
		}
		if c == len(a)-1 {
			return next()
		}
		return word{text: strings.TrimPrefix(a[c+1:], "="), literal: true}, 0, true
	}
	return word{}, 0, false
}

// fenceFlagWithValue reports whether flag takes the next word as its
// value: a value flag written without =.
func fenceFlagWithValue(flag string) bool {
	for _, f := range FenceValueFlags {
		if flag == f {
			return true
		}
	}
	return len(flag) > 2 && flag[0] == '-' && flag[1] != '-' && strings.ContainsAny(flag[len(flag)-1:], "stp")
}
