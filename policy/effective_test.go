package policy

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestEffectiveGolden pins both shapes of `config show --effective`: the
// values alone, and each entry with its rule and source.
func TestEffectiveGolden(t *testing.T) {
	r := &Resolved{
		Config: Config{
			Network:    Network{AllowedDomains: []string{"Example.COM", "*.npmjs.org"}, DeniedDomains: []string{"evil.example.com"}},
			Filesystem: Filesystem{DefaultDenyRead: true, AllowRead: []string{"~/notes"}, AllowWrite: []string{"."}, DenyRead: []string{"**/*.pem"}, DenyWrite: []string{"vendor"}},
			Command:    Command{Allow: []string{"git push origin"}},
			Env:        EnvVars{Deny: []string{"*_TOKEN", "PGPASSWORD"}, Allow: []string{"CI_JOB_TOKEN"}},
		},
		Chain:   Chain{{Kind: KindProject, Path: "/w/fence.jsonc"}},
		origins: map[string]Origin{},
	}
	for key, values := range map[string][]string{
		"network.allowedDomains": r.Config.Network.AllowedDomains, "network.deniedDomains": r.Config.Network.DeniedDomains,
		"filesystem.allowRead": r.Config.Filesystem.AllowRead, "filesystem.allowWrite": r.Config.Filesystem.AllowWrite,
		"filesystem.denyRead": r.Config.Filesystem.DenyRead, "filesystem.denyWrite": r.Config.Filesystem.DenyWrite,
		"command.allow": r.Config.Command.Allow, "env.deny": r.Config.Env.Deny, "env.allow": r.Config.Env.Allow,
	} {
		for _, v := range values {
			r.origins[key+"\x00"+v] = Origin{Source: r.Chain[0]}
		}
	}
	if err := r.Apply(Flags{DenyCommands: []string{"git push"}, DenyWrite: []string{"/w/dist"}}, "/w"); err != nil {
		t.Fatal(err)
	}
	origin := func(key, value string) string {
		if o, ok := r.Origin(key, value); ok {
			return o.Source.Label()
		}
		return ""
	}
	p := Compile(r.Config, Env{Dir: "/w/app", Home: "/h", UserConfigDir: "/h/.config/fence", ConfigFiles: []string{"/w/fence.jsonc"}, Origin: origin, Firm: r.FromCommandLine})
	for name, origins := range map[string]bool{"plain": false, "origins": true} {
		t.Run(name, func(t *testing.T) {
			got := p.Effective().JSON(origins)
			golden := filepath.Join("..", "testdata", "effective", name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("effective policy differs from %s (run with -update to accept):\n%s", golden, got)
			}
		})
	}
}
