package sandbox

import (
	"path"
	"slices"
	"strings"
)

// wrappers run the command in their arguments. Each entry skips the
// wrapper's own options (and their values) and returns the command.
var wrappers = map[string]func([]word) []word{
	"env":     skipEnv,
	"command": skipOpts("", "vV"),
	"exec":    skipExec,
	"nice":    skipOpts("n", "", "--adjustment"),
	"nohup":   skipOpts("", ""),
	"time":    skipOpts("fo", ""),
	"timeout": skipTimeout,
	"stdbuf":  skipOpts("ioe", "", "--input", "--output", "--error"),
	"xargs": skipOpts("EIaLndPs", "", "--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
		"--max-procs", "--max-chars", "--process-slot-var"),
	"sudo":    skipOpts("ugCDhprtUT", "lv"),
	"doas":    skipOpts("uC", ""),
	"setsid":  skipOpts("", ""),
	"ionice":  skipOpts("cnp", ""),
	"chrt":    skipOpts("", ""),
	"watch":   skipOpts("nd", ""),
	"busybox": skipOpts("", ""),
}

// loaderNames are the dynamic loaders of glibc and musl on the
// architectures they build for: run as a program, each runs the program
// named by its first operand (ld-linux-x86-64.so.2 /usr/bin/git push).
// The map holds them by name; IsLoader also knows names by pattern.
var loaderNames = []string{
	"ld.so", "ld.so.1", "ld64.so.1", "ld64.so.2",
	"ld-linux.so.2", "ld-linux.so.3", "ld-linux-x86-64.so.2", "ld-linux-x32.so.2",
	"ld-linux-aarch64.so.1", "ld-linux-aarch64_be.so.1", "ld-linux-armhf.so.3",
	"ld-linux-riscv64-lp64d.so.1", "ld-linux-riscv64-lp64.so.1",
	"ld-linux-riscv32-ilp32d.so.1", "ld-linux-riscv32-ilp32.so.1",
	"ld-linux-loongarch-lp64d.so.1", "ld-linux-loongarch-lp64s.so.1",
	"ld-linux-ia64.so.2", "ld-linux-mipsn8.so.1", "ld-linux-or1k.so.1",
	"ld-linux-arc.so.2", "ld-linux-arceb.so.2", "ld-linux-nios2.so.1",
	"ld-linux-cskyv2.so.1", "ld-linux-cskyv2-hf.so.1",
	"ld-musl-x86_64.so.1", "ld-musl-i386.so.1", "ld-musl-x32.so.1",
	"ld-musl-aarch64.so.1", "ld-musl-aarch64_be.so.1",
	"ld-musl-arm.so.1", "ld-musl-armhf.so.1", "ld-musl-armeb.so.1", "ld-musl-armebhf.so.1",
	"ld-musl-riscv64.so.1", "ld-musl-riscv32.so.1", "ld-musl-loongarch64.so.1",
	"ld-musl-powerpc.so.1", "ld-musl-powerpc64.so.1", "ld-musl-powerpc64le.so.1",
	"ld-musl-s390x.so.1", "ld-musl-mips.so.1", "ld-musl-mipsel.so.1",
	"ld-musl-mips64.so.1", "ld-musl-mips64el.so.1", "ld-musl-m68k.so.1",
	"ld-musl-microblaze.so.1", "ld-musl-or1k.so.1", "ld-musl-sh.so.1",
}

func init() {
	for _, n := range loaderNames {
		wrappers[n] = skipLoader
	}
}

// LoaderWrapper is the name argv mode gives a program IsLoader knows
// only by pattern, so that preflight unwraps it like the loaders by name.
const LoaderWrapper = "ld.so"

// IsLoader reports whether a program's base name is a dynamic loader's:
// ld.so and ld.so.N, ld64.so.N, ld-*.so and ld-*.so.N (ld-linux-*,
// ld-musl-*, and the versioned ld-2.31.so of older glibc), and musl's
// libc.musl-*.so.1, the file its loader's name links to.
func IsLoader(name string) bool {
	if wrappers[name] != nil && strings.HasPrefix(name, "ld") {
		return true
	}
	for _, pattern := range []string{"ld.so.*", "ld64.so.*", "ld-*.so", "ld-*.so.*", "libc.musl-*.so.1"} {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// loaderValue are the loader options that take the next argument as
// their value (glibc's and musl's); loaderStop are those with which the
// loader lists or checks the program but does not run it.
var (
	loaderValue = []string{"--library-path", "--preload", "--argv0", "--audit", "--inhibit-rpath",
		"--glibc-hwcaps-prepend", "--glibc-hwcaps-mask"}
	loaderStop = []string{"--list", "--verify", "--help", "--version", "--list-tunables", "--list-diagnostics"}
)

// skipLoader skips a dynamic loader's options and returns the program it
// runs with that program's arguments. An option it does not know is
// skipped alone, so that what follows is still judged.
// LoaderOperand is the argv of the program the dynamic loader's argv
// (argv[0] the loader) runs; false when it runs none (--list, --verify).
func LoaderOperand(argv []string) ([]string, bool) {
	words := make([]word, 0, len(argv))
	for _, a := range argv[min(1, len(argv)):] {
		words = append(words, word{text: a, literal: true})
	}
	rest := skipLoader(words)
	if len(rest) == 0 {
		return nil, false
	}
	out := make([]string, len(rest))
	for i, w := range rest {
		out[i] = w.text
	}
	return out, true
}

func skipLoader(args []word) []word {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case !args[i].literal:
			return args[i:]
		case a == "--":
			return args[i+1:]
		case !strings.HasPrefix(a, "--"):
			return args[i:]
		case slices.Contains(loaderStop, a):
			return nil
		case slices.Contains(loaderValue, a):
			i++
		}
	}
	return nil
}

// skipOpts skips leading options; letters in withValue take the next
// argument as their value; letters in stop mean the wrapper runs nothing
// (command -v only looks a name up), so nothing is returned.
// longWithValue are the long options that take the next argument as
// their value when written without "=".
func skipOpts(withValue, stop string, longWithValue ...string) func([]word) []word {
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
				if slices.Contains(longWithValue, a) {
					i++ // --signal KILL
				}
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

// skipEnv skips env's options and VAR=value assignments. -S (and
// --split-string) is the command itself, split at blanks, then the rest.
func skipEnv(args []word) []word {
	for i := 0; i < len(args); i++ {
		a := args[i].text
		split, glued := strings.CutPrefix(a, "--split-string=")
		if !glued && strings.HasPrefix(a, "-S") && len(a) > 2 {
			split, glued = a[2:], true
		}
		switch {
		case !args[i].literal:
			return args[i:]
		case glued || (a == "-S" || a == "--split-string") && i+1 < len(args):
			if !glued {
				i++
				split = args[i].text
			}
			var out []word
			for _, f := range strings.Fields(split) {
				out = append(out, word{text: f, literal: args[i].literal})
			}
			return append(out, args[i+1:]...)
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
			continue
		default:
			return args[i:]
		}
	}
	return nil
}

// skipExec skips exec's options. git runs the subcommand its argv[0]
// names (git-push), so `exec -a git-push git` is git push.
func skipExec(args []word) []word {
	rest := skipOpts("a", "")(args)
	for i := 0; i+1 < len(args) && len(rest) > 0; i++ {
		if args[i].text == "-a" && args[i+1].literal && path.Base(rest[0].text) == "git" {
			if sub, ok := strings.CutPrefix(path.Base(args[i+1].text), "git-"); ok && sub != "" {
				return append([]word{rest[0], {text: sub, literal: true}}, rest[1:]...)
			}
		}
	}
	return rest
}

// skipTimeout skips timeout's options and its duration.
func skipTimeout(args []word) []word {
	rest := skipOpts("sk", "", "--signal", "--kill-after")(args)
	if len(rest) > 0 {
		return rest[1:]
	}
	return nil
}
