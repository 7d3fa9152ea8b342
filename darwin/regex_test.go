package darwin

import (
	"math/rand/v2"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fence-sandbox/fence/policy"
)

// TestGlobRegexMatchesLinux is the property the profile rests on: for
// every pattern and path, the SBPL regex matches exactly when the Linux
// matcher (policy.Covers) does, dotfiles and case included.
func TestGlobRegexMatchesLinux(t *testing.T) {
	patterns := []string{
		"/w", "/w/.env", "/w/**/.env", "/w/**/.env.*", "/w/**/*.pem", "/h/.ssh/id_*", "/h/.aws",
		"/w/src/**", "/w/*.go", "/w/a?c", "/w/[ab]*", "/w/**", "/w/**/x/**/y", "/w/{a,b}/c",
		"/w/{a,{b,c}}/x", "/w/{a,b{c,x}}", "/w/{src,{x,y}/**}/main.go",
		"/w/my file", "/w/quo\"te", "/w/back\\\\slash", "/w/dot.ts", "/w/**/node_modules", "/Ünï/**/Cåse",
	}
	segments := []string{"w", "h", ".env", ".env.local", "a.pem", "SERVER.PEM", ".ssh", "id_rsa", "id_ed25519.pub",
		".aws", "credentials", "src", "main.go", "abc", "aXc", "x", "y", "a", "b", "c", "my file", "quo\"te",
		"back\\slash", "dot.ts", "dotXts", "node_modules", "Ünï", "ünï", "Cåse", "CÅSE", "W", ".ENV"}
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{"/", "/w", "/w/.env", "/h/.ssh/id_rsa"}
	for range 3000 {
		var p strings.Builder
		for range 1 + rng.IntN(5) {
			p.WriteString("/" + segments[rng.IntN(len(segments))])
		}
		paths = append(paths, p.String())
	}
	for _, pattern := range patterns {
		for _, fold := range []bool{false, true} {
			re := regexp.MustCompile("(?s)" + globRegex(pattern, fold)) // SBPL regexes are POSIX: "." matches a newline
			for _, path := range paths {
				want := policy.Covers(pattern, path, fold)
				if got := re.MatchString(path); got != want {
					t.Errorf("pattern %q fold %v path %q: regex %v, Linux matcher %v (regex %s)", pattern, fold, path, got, want, re)
				}
			}
		}
	}
}

// FuzzGlobRegex is TestGlobRegexMatchesLinux on generated patterns and
// paths: the SBPL regex must match exactly when the Linux matcher does.
func FuzzGlobRegex(f *testing.F) {
	for _, s := range [][2]string{
		{"/w/**/.env", "/w/a/.env/b"}, {"/w/**/*.pem", "/w/K/SERVER.PEM"}, {"/h/.ssh/id_*", "/h/.ssh/id_rsa.pub"},
		{"/w/**", "/w"}, {"/w/*/x", "/w/a/x/y"}, {"/w/[ab]?", "/w/az"}, {"/w/a?c", "/w/a/c"}, {"/Ünï/**/Cåse", "/ünï/x/CÅSE"},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, pattern, p string, fold bool) {
		// The root itself is left out: doublestar and the regex differ on
		// whether "/*/**" names it, and no rule is about "/" through a glob.
		if !validPattern(pattern) || !path.IsAbs(p) || p == "/" || path.Clean(p) != p || !utf8.ValidString(p) {
			return
		}
		re, err := regexp.Compile("(?s)" + globRegex(pattern, fold)) // SBPL regexes are POSIX: "." matches a newline
		if err != nil {
			t.Fatalf("pattern %q: the regex does not compile: %v", pattern, err)
		}
		got, want := re.MatchString(p), policy.Covers(pattern, p, fold)
		if got && !want && strings.HasSuffix(pattern, "/**") && policy.Covers(pattern, p+"/x", fold) {
			// doublestar leaves out the directory itself for some
			// patterns ending in "/**" ("/w*/**" and "/w"), while it
			// matches everything inside; the regex covers the directory
			// too. Known, and left: the two differ on the directory
			// entry alone.
			return
		}
		if got != want {
			t.Fatalf("pattern %q fold %v path %q: regex %v, Linux matcher %v (regex %s)", pattern, fold, p, got, want, re)
		}
	})
}

// validPattern is a pattern a config could hold, after Expand, that
// `fence config lint` does not warn about: absolute, clean, valid UTF-8, a
// valid glob, and "**" only as a whole segment
// (bare-doublestar).
func validPattern(p string) bool {
	if !path.IsAbs(p) || path.Clean(p) != p || !utf8.ValidString(p) || policy.CheckPathPattern(p) != "" {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.Contains(seg, "**") && seg != "**" {
			return false
		}
	}
	return true
}
