package sandbox

import (
	"path"
	"slices"
	"strings"
)

// gitConfigWriters are the git subcommands that write the repository's
// config, each with the arguments that make it do so ("" for always).
var gitConfigWriters = map[string][]string{
	"remote":    {"add", "rm", "remove", "rename", "set-url", "set-head", "set-branches"},
	"submodule": {"add", "init", "--init", "sync", "set-url", "set-branch", "deinit", "absorbgitdirs"},
	"branch":    {"-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-t", "--track"},
	"push":      {"-u", "--set-upstream"},
	"checkout":  {"-t", "--track"},
	"switch":    {"-t", "--track"},
	"lfs":       {"install"},
}

// gitConfigReads are the options and actions of git config that only
// read, or that write some other file than the repository's.
var gitConfigReads = []string{"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list", "get", "list",
	"--global", "--system", "--file", "-f", "--blob"}

// WritesGitConfig says whether a command line (argv, or a -c string)
// runs git in a way that writes the repository's config: after a run
// that failed, fence names the rule that kept the file read-only, since
// git itself can only say "Device or resource busy". It reads words, not
// shell syntax: it decides a hint, nothing else.
func WritesGitConfig(argv []string, shell string) bool {
	words := argv
	if shell != "" {
		words = strings.Fields(strings.NewReplacer(";", " ", "&", " ", "|", " ", "(", " ", ")", " ", "`", " ", "$", " ", "'", "", `"`, "").Replace(shell))
	}
	for i, w := range words {
		if path.Base(w) == "git" && gitWritesConfig(gitSubcommand(words[i+1:])) {
			return true
		}
	}
	return false
}

// gitSubcommand skips git's global options: what follows is the
// subcommand and its arguments.
func gitSubcommand(args []string) []string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path":
			i++ // the option's value
		case !strings.HasPrefix(a, "-"):
			return args[i:]
		}
	}
	return nil
}

func gitWritesConfig(sub []string) bool {
	if len(sub) == 0 {
		return false
	}
	args := sub[1:]
	if sub[0] == "config" {
		return len(args) > 0 && !slices.ContainsFunc(args, func(a string) bool { return slices.Contains(gitConfigReads, a) }) && (len(args) > 1 || strings.HasPrefix(args[0], "--unset") || args[0] == "set" || args[0] == "unset")
	}
	writers, ok := gitConfigWriters[sub[0]]
	return ok && slices.ContainsFunc(args, func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		return slices.Contains(writers, name)
	})
}
