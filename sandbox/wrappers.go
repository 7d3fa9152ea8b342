package sandbox

import "strings"

// wrappers run the command in their arguments. Each entry skips the
// wrapper's own options (and their values) and returns the command.
var wrappers = map[string]func([]word) []word{
	"env":     skipEnv,
	"command": skipOpts("", "vV"),
	"exec":    skipOpts("a", ""),
	"nice":    skipOpts("n", ""),
	"nohup":   skipOpts("", ""),
	"time":    skipOpts("fo", ""),
	"timeout": skipTimeout,
	"stdbuf":  skipOpts("ioe", ""),
	"xargs":   skipOpts("EIaLndPs", ""),
	"sudo":    skipOpts("ugCDhprtUT", "lv"),
	"doas":    skipOpts("uC", ""),
	"setsid":  skipOpts("", ""),
	"ionice":  skipOpts("cnp", ""),
	"chrt":    skipOpts("", ""),
	"watch":   skipOpts("nd", ""),
	"busybox": skipOpts("", ""),
}

// skipOpts skips leading options; letters in withValue take the next
// argument as their value; letters in stop mean the wrapper runs nothing
// (command -v only looks a name up), so nothing is returned.
func skipOpts(withValue, stop string) func([]word) []word {
	return func(args []word) []word {
		for i := 0; i < len(args); i++ {
			a := args[i].text
			switch {
			case !args[i].literal:
				return args[i:]
			case a == "--":
				return args[i+1:]
			case !strings.HasPrefix(a, "-") || a == "-":
				return args[i:]
			case strings.HasPrefix(a, "--"):
				continue // --long or --long=value
			case strings.ContainsAny(a[1:], stop) && stop != "":
				return nil
			case strings.ContainsAny(a[len(a)-1:], withValue) && withValue != "":
				i++ // -n 10, -u root
			}
		}
		return nil
	}
}

// skipEnv skips env's options and VAR=value assignments.
func skipEnv(args []word) []word {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case !args[i].literal:
			return args[i:]
		case a == "-u" || a == "-C" || a == "-S" || a == "--unset" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
			continue
		default:
			return args[i:]
		}
	}
	return nil
}

// skipTimeout skips timeout's options and its duration.
func skipTimeout(args []word) []word {
	rest := skipOpts("sk", "")(args)
	if len(rest) > 0 {
		return rest[1:]
	}
	return nil
}
