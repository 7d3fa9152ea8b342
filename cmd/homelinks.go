package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
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
		for _, l := range linksOnTheWay(at.spelled) {
			dir := filepath.Dir(l.link)
			if rules := pol.WritableBy(dir); len(rules) > 0 && pol.CheckPath("write", dir, dir).Allowed {
				return fmt.Errorf("%s (%s) is reached through the link %s, which %s lets the command replace, since it may write %s: a later run would read fence's user config, trust records and writable-tree history from wherever the command pointed the link; spell HOME and XDG_CONFIG_HOME without links (%s), or narrow the rule",
					at.what, at.spelled, l.link, ruleName(rules[0]), dir, l.resolved)
			}
		}
	}
	return nil
}

// A wayLink is a symlink met on the way to a path, where it lies with
// the links before it resolved, and the path it all resolves to.
type wayLink struct{ link, resolved string }

// maxLinks bounds the links followed on the way to one path, as the
// kernel's 40 does.
const maxLinks = 40

// linksOnTheWay is every symlink met while resolving the absolute path
// p as the kernel would, each where it lies once the links before it
// are resolved; none when p is not absolute or does not resolve.
func linksOnTheWay(p string) []wayLink {
	if !filepath.IsAbs(p) {
		return nil
	}
	var links []string
	at, rest := "/", strings.Split(filepath.Clean(p), "/")
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		next := filepath.Join(at, part)
		fi, err := inputs.Lstat(next)
		if err != nil {
			return nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			at = next
			continue
		}
		target, err := inputs.Readlink(next)
		if err != nil || len(links) == maxLinks {
			return nil
		}
		links = append(links, next)
		if filepath.IsAbs(target) {
			at = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	out := make([]wayLink, len(links))
	for i, l := range links {
		out[i] = wayLink{l, at}
	}
	return out
}
