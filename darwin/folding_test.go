package darwin

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// denyRegexes are the regexes of the profile's denies of op, compiled.
func denyRegexes(rules []rule, op string) []*regexp.Regexp {
	var out []*regexp.Regexp
	var walk func(f sexp)
	walk = func(f sexp) {
		if f.kind != 'l' {
			return
		}
		if len(f.items) == 2 && f.items[0].atom == "regex" && f.items[1].kind == 'r' {
			out = append(out, regexp.MustCompile(unescapeRegex(f.items[1].atom)))
		}
		for _, it := range f.items {
			walk(it)
		}
	}
	for _, r := range rules {
		if r.action == "deny" && slices.Contains(r.ops, op) {
			for _, f := range r.filters {
				walk(f)
			}
		}
	}
	return out
}

// TestEveryDenyFolded: every deny ignores case as the user's deny rules
// do (macOS's file systems mostly ignore it), whoever made it: the
// mandatory ones, the credential files', the user's, and command.deny's
// binaries. Each plain path, written in upper case, is still denied.
func TestEveryDenyFolded(t *testing.T) {
	c := policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"~"}, DenyRead: []string{"~/.aws"}}, Command: policy.Command{Deny: []string{"python2", "sudo"}}}
	in := InputFromPolicy(policy.Compile(c, testEnv), testOptions, testFinder)
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	rules := checkProfile(t, "every deny folded", p)
	denied := func(op, path string) bool {
		return slices.ContainsFunc(denyRegexes(rules, op), func(re *regexp.Regexp) bool { return re.MatchString(path) })
	}
	n := 0
	for _, r := range slices.Concat(in.DenyRead, in.DenyWrite) {
		for _, s := range r.spellings() {
			if r.Glob {
				continue
			}
			if n++; !denied("file-write*", strings.ToUpper(s)) {
				t.Errorf("%s %s: %s is not denied in upper case", r.Name, r.Pattern, strings.ToUpper(s))
			}
		}
	}
	for _, e := range in.ExecDenies {
		for _, b := range e.Binaries {
			if n++; !denied("process-exec", strings.ToUpper(b)) {
				t.Errorf("command.deny %s: %s runs in upper case", e.Rule, strings.ToUpper(b))
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d denied paths checked", n)
	}
}
