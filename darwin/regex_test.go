package darwin

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestGlobRegexMatchesLinux is the property the profile rests on: for
// every pattern and path, the SBPL regex matches exactly when the Linux
// matcher (policy.Covers) does, dotfiles and case included.
func TestGlobRegexMatchesLinux(t *testing.T) {
	patterns := []string{
		"/w", "/w/.env", "/w/**/.env", "/w/**/.env.*", "/w/**/*.pem", "/h/.ssh/id_*", "/h/.aws",
		"/w/src/**", "/w/*.go", "/w/a?c", "/w/[ab]*", "/w/**", "/w/**/x/**/y", "/w/{a,b}/c",
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
			re := regexp.MustCompile(globRegex(pattern, fold))
			for _, path := range paths {
				want := policy.Covers(pattern, path, fold)
				if got := re.MatchString(path); got != want {
					t.Errorf("pattern %q fold %v path %q: regex %v, Linux matcher %v (regex %s)", pattern, fold, path, got, want, re)
				}
			}
		}
	}
}
