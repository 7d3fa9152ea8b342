package sandbox

import (
	"os"
	"path"
	"slices"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// BenchmarkSanitizeEnv sanitizes this process's environment with the
// code template's env rules, as every run does.
func BenchmarkSanitizeEnv(b *testing.B) {
	r, err := policy.Load(policy.Options{Template: "code", Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		b.Fatal(err)
	}
	c := r.Config
	environ := append(os.Environ(), "GITHUB_TOKEN=x", "github_token=y", "PGPASSWORD=z")
	for len(environ) < 60 {
		environ = append(environ, "EVERYDAY_NAME_"+string(rune('A'+len(environ)%26))+"=1")
	}
	for b.Loop() {
		SanitizeEnv(environ, c.Env.Deny, c.Env.Allow)
	}
}

// TestEnvMatcherAgreesWithGlob holds the matcher to path.Match on the
// folded strings, for every template pattern and every name the tests
// know, and for patterns with other metacharacters.
func TestEnvMatcherAgreesWithGlob(t *testing.T) {
	r, err := policy.Load(policy.Options{Template: "code", Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		t.Fatal(err)
	}
	patterns := append(slices.Clone(r.Config.Env.Deny), "A*B*C", "*", "**", "X?Z", "[AB]*_KEY", "*_T\\OKEN", "NPM_CONFIG_*:_AUTHTOKEN")
	names := slices.Concat(secretEnvNames, everydayEnvNames, []string{"", "ABC", "AXBXC", "AB", "XYZ", "A_KEY", "npm_config_//r.example/:_authToken"})
	for _, p := range patterns {
		for _, n := range names {
			want, err := path.Match(foldEnv(p), foldEnv(n))
			want = want && err == nil
			if got := MatchEnv(p, n); got != want {
				t.Errorf("MatchEnv(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
}

func TestGitAutocorrectOff(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"A=1"}, []string{"A=1", "GIT_CONFIG_KEY_0=help.autocorrect", "GIT_CONFIG_VALUE_0=0", "GIT_CONFIG_COUNT=1"}},
		{[]string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"},
			[]string{"GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c", "GIT_CONFIG_KEY_2=help.autocorrect", "GIT_CONFIG_VALUE_2=0", "GIT_CONFIG_COUNT=3"}},
	} {
		if got := GitAutocorrectOff(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("GitAutocorrectOff(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
