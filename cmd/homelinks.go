package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// guardConfigLinks refuses a run whose policy lets the command rewrite a
// link on the way to $HOME or to the user config directory. fence reads
// its user config, trust store and writable-tree history through those
// spellings before every run, and trusts what it finds: a run that may
// write the directory holding such a link (a HOME reached through a link
// in /tmp, under a rule that shares the host's /tmp) could point it at a
// directory of its own, and every fence run started while it lasts would
// load the config and trust records it planted there.
func guardConfigLinks(pol *policy.Policy, opts policy.Options) error {
	for _, at := range []struct{ what, spelled string }{{"$HOME", opts.Home}, {"the user config directory", opts.UserConfigDir}} {
		link, target := firstLink(at.spelled)
		if link == "" {
			continue
		}
		dir := filepath.Dir(link)
		if rules := pol.WritableBy(dir); len(rules) > 0 && pol.CheckPath("write", dir, dir).Allowed {
			return fmt.Errorf("%s (%s) is reached through the link %s, which %s lets the command replace, since it may write %s: a later run would read fence's user config, trust records and writable-tree history from wherever the command pointed the link; spell HOME and XDG_CONFIG_HOME without it (%s), or narrow the rule",
				at.what, at.spelled, link, ruleName(rules[0]), dir, strings.Replace(at.spelled, link, target, 1))
		}
	}
	return nil
}

// firstLink is the first symlink on the way to the absolute path p, as
// spelled, and the directory it leads to (empty when there is none).
func firstLink(p string) (link, target string) {
	if !filepath.IsAbs(p) {
		return "", ""
	}
	at := "/"
	for _, part := range strings.Split(filepath.Clean(p), "/") {
		if part == "" {
			continue
		}
		at = filepath.Join(at, part)
		fi, err := os.Lstat(at)
		if err != nil {
			return "", ""
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(at)
			if err != nil {
				resolved = "its target"
			}
			return at, resolved
		}
	}
	return "", ""
}
