package darwin

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

var update = flag.Bool("update", false, "rewrite the golden profiles in testdata/darwin")

var testEnv = policy.Env{Dir: "/Users/dev/project", Home: "/Users/dev", UserConfigDir: "/Users/dev/.config/fence",
	ConfigFiles: []string{"/Users/dev/project/fence.jsonc"}}

var testOptions = ProfileOptions{HTTPPort: 3128, SOCKSPort: 1080, TmpDir: "/var/folders/zz/fence-tmp"}

func templatePolicy(t *testing.T, name string) *policy.Policy {
	t.Helper()
	r, err := policy.Load(policy.Options{Template: name, Dir: testEnv.Dir, Home: testEnv.Home, UserConfigDir: testEnv.UserConfigDir})
	if err != nil {
		t.Fatal(err)
	}
	return policy.Compile(r.Config, testEnv)
}

// edgeCases are policies the templates do not cover.
var edgeCases = map[string]policy.Config{
	"empty": {},
	"globs": {Filesystem: policy.Filesystem{
		DenyRead:  []string{"**/.env", "~/.ssh/id_*", "src/**/*.{pem,key}", "build/[ab]?/out"},
		DenyWrite: []string{"**/*.lock"},
	}},
	"deny-inside-allow": {Filesystem: policy.Filesystem{
		DefaultDenyRead: true, AllowRead: []string{"~/src"}, AllowWrite: []string{".", "/tmp/work"},
		DenyRead: []string{"~/src/secrets"}, DenyWrite: []string{"vendor"}, AllowExecute: []string{"/opt/tools/bin"},
	}},
	"odd-paths": {Filesystem: policy.Filesystem{
		AllowWrite: []string{"/Users/dev/my dir", "/Users/dev/quo\"te", "/Users/dev/back\\slash", "/Users/dev/new\nline"},
		DenyRead:   []string{"/Users/dev/ev\"il) (allow default"},
	}},
	"network": {AllowPty: true, Network: policy.Network{
		AllowLocalBinding: &[]bool{true}[0], AllowLocalOutboundPorts: []int{5432}, AllowUnixSockets: []string{"/var/run/docker.sock"},
	}, MacOS: policy.MacOS{Mach: policy.Mach{Lookup: []string{"com.example.agent", "com.example.helper.*"}, Register: []string{"com.example.mine"}}}},
}

func TestProfileGolden(t *testing.T) {
	profiles := map[string]string{}
	for _, name := range policy.TemplateNames() {
		profiles["template-"+name] = Profile(templatePolicy(t, name), testOptions)
	}
	for name, c := range edgeCases {
		profiles[name] = Profile(policy.Compile(c, testEnv), testOptions)
	}
	for name, got := range profiles {
		path := filepath.Join("..", "testdata", "darwin", name+".sb")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./darwin -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("profile %s differs from %s:\n%s", name, path, got)
		}
	}
}

// TestProfileChecks parses every profile and checks its shape: balanced
// parentheses, known operations and filters only, every string closed
// and escaped, denies after allows, and the denies carrying a message.
func TestProfileChecks(t *testing.T) {
	var all []string
	for _, name := range policy.TemplateNames() {
		all = append(all, Profile(templatePolicy(t, name), testOptions))
	}
	for _, c := range edgeCases {
		all = append(all, Profile(policy.Compile(c, testEnv), testOptions))
	}
	for _, profile := range all {
		forms, err := parseSBPL(profile)
		if err != nil {
			t.Fatalf("%v in:\n%s", err, profile)
		}
		if err := checkForms(forms); err != nil {
			t.Errorf("%v in:\n%s", err, profile)
		}
	}
}

func TestEscaping(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:       `"plain"`,
		`a"b`:         `"a\"b"`,
		`a\b`:         `"a\\b"`,
		"a\nb":        `"a\nb"`,
		"a\x01b":      `"a\x01b"`,
		`") (allow x`: `"\") (allow x"`,
	} {
		if got := sbplString(in); got != want {
			t.Errorf("sbplString(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`^/a\.b$`:  `#"^/a\.b$"`,
		`^/a"b$`:   `#"^/a\"b$"`,
		"^/a\tb\n": `#"^/a\tb\n"`,
		"^/a\x01$": `#"^/a\x01$"`,
	} {
		if got := sbplRegex(in); got != want {
			t.Errorf("sbplRegex(%q) = %s, want %s", in, got, want)
		}
	}
	p := Profile(policy.Compile(edgeCases["odd-paths"], testEnv), testOptions)
	if strings.Contains(p, "(allow default") && !strings.Contains(p, `ev\"il) (allow default`) {
		t.Errorf("a path broke out of its string:\n%s", p)
	}
}

func TestProfileMapsPrivateDirs(t *testing.T) {
	p := Profile(policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"/tmp/x", "/var/log/y", "/etc/z"}}}, testEnv), testOptions)
	for _, want := range []string{`(subpath "/private/tmp/x")`, `(subpath "/private/var/log/y")`, `(subpath "/private/etc/z")`} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %s", want)
		}
	}
	if !slices.Contains(strings.Split(p, "\n"), `(allow file-read* file-write* (subpath "/private/var/folders/zz/fence-tmp"))`) {
		t.Errorf("the private TMPDIR is not writable:\n%s", p)
	}
}
