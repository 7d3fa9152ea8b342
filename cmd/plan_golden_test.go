package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/fence-sandbox/fence/sandbox"
)

// goldenPolicy fills most of a plan: writes and denies, a filtered
// network with a local port, argv-mode exec judging, limits; every unix
// socket is allowed and no default command rule applies, and the command
// rules name programs no system has, so that neither the host's sockets
// nor its programs make the plan.
const goldenPolicy = `{
	"filesystem": {"strictDenyRead": true, "allowRead": ["src"], "allowWrite": ["."], "denyRead": ["secret.txt", "**/*.pem"], "denyWrite": ["README"]},
	"network": {"allowedDomains": ["example.com", "*.example.org"], "deniedDomains": ["bad.example.com"], "allowLocalOutboundPorts": [5432], "allowAllUnixSockets": true},
	"command": {"useDefaults": false, "deny": ["fence-golden-vcs push", "fence-golden-pkg publish --force"], "runtimeExecPolicy": "argv"},
	"limits": {"timeout": "60s", "openFiles": 256}
}`

// goldenPolicyDarwin is goldenPolicy without what the macOS backend
// refuses (argv-mode exec judging, resource limits), which would make
// `fence plan --platform darwin` exit 125.
var goldenPolicyDarwin = strings.NewReplacer(`, "runtimeExecPolicy": "argv"`, "", `, "openFiles": 256`, "").Replace(goldenPolicy)

// TestPlanGolden prints `fence plan` for Linux (the JSON the backend
// reads) and for macOS (the profile compiled from the plan) in a fixed
// tree, and compares them with testdata/plan/*.golden (rewritten under
// -update), with $WORK for the tree, $FENCE for the running binary (in
// $FENCEDIR) and $UID for the caller; the digits of temporary names are
// N (the macOS profile spells the tree in patterns that ignore case).
func TestPlanGolden(t *testing.T) {
	goldens, err := filepath.Abs(filepath.Join("testdata", "plan"))
	if err != nil {
		t.Fatal(err)
	}
	// Below /tmp itself: fence looks for config in every parent.
	tmp, err := os.MkdirTemp("/tmp", "fence-golden-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	work, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ws/README", "ws/secret.txt", "ws/src/main.go", "ws/src/key.pem", "home/.bashrc", "bin/"} {
		p := filepath.Join(work, f)
		if strings.HasSuffix(f, "/") {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x\n"), 0o644)
	}
	os.WriteFile(filepath.Join(work, "policy.json"), []byte(goldenPolicy), 0o644)
	t.Chdir(filepath.Join(work, "ws"))
	for _, kv := range [][2]string{{"HOME", work + "/home"}, {"PATH", work + "/bin"}, {"XDG_CONFIG_HOME", ""}, {"XDG_DATA_HOME", ""}, {"XDG_STATE_HOME", ""}, {"XDG_RUNTIME_DIR", ""}, {"TMPDIR", ""}, {"SSH_AUTH_SOCK", ""}} {
		t.Setenv(kv[0], kv[1])
	}
	for _, platform := range []string{"linux", "darwin"} {
		var stdout, stderr bytes.Buffer
		root := newRootCmd(&stdout, &stderr)
		pol := "../policy.json"
		if platform == "darwin" {
			// Written after the Linux plan, whose rules list the tree's entries.
			pol = "../policy-darwin.json"
			os.WriteFile(filepath.Join(work, "policy-darwin.json"), []byte(goldenPolicyDarwin), 0o644)
		}
		root.SetArgs([]string{"plan", "-s", pol, "--platform", platform, "--landlock-only", "--", "make", "test"})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v\n%s", platform, err, stderr.String())
		}
		out := stdout.String()
		if platform == "linux" {
			out = withoutHostCarving(t, out, work)
		}
		got := normalizePlan(out, work)
		golden := filepath.Join(goldens, platform+".golden")
		if *update {
			os.MkdirAll(goldens, 0o755)
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: fence plan differs from %s (run with -update to rewrite it):\n%s", platform, golden, lineDiff(string(want), got))
		}
	}
}

// withoutHostCarving leaves out of the Landlock-only rules those carved
// from directories outside the tree (the host's / and /tmp, whose
// entries differ from one machine to the next).
func withoutHostCarving(t *testing.T, out, work string) string {
	t.Helper()
	var p sandbox.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.LandlockOnly == nil {
		t.Fatal("fence plan prints no Landlock-only rules")
	}
	p.LandlockOnly.Rules = slices.DeleteFunc(p.LandlockOnly.Rules, func(r sandbox.LandlockRule) bool {
		return r.Kind == sandbox.KindAllUnixSockets && !strings.HasPrefix(r.Path, work+"/")
	})
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	uidField  = regexp.MustCompile(`"(uid|gid)": \d+|fence-runtime-\d+`)
	tempDigit = regexp.MustCompile(`(fence-golden-|\[Nn\]-|go-build|\[Bb\]\[Uu\]\[Ii\]\[Ll\]\[Dd\])\d+`)
)

// normalizePlan puts $WORK, $FENCE (and its directories) and $UID in place of what differs
// from one machine or run to the next.
func normalizePlan(s, work string) string {
	if self := fenceBinary(); self != "" {
		for _, p := range []string{"/private" + self, self} {
			s = strings.ReplaceAll(s, foldedSpelling(p), "$FENCE")
		}
		for _, p := range []string{"/private" + filepath.Dir(self), filepath.Dir(self)} {
			s = strings.ReplaceAll(s, foldedSpelling(p), "$FENCEDIR")
		}
		// The directory above the binary's, which the macOS profile
		// guards from rename: go-buildN, or another place the test
		// binary was copied to.
		parent := filepath.Dir(filepath.Dir(self))
		for _, p := range []string{"/private" + parent, parent} {
			s = strings.ReplaceAll(s, foldedSpelling(p), "$FENCEPARENT")
		}
		s = strings.ReplaceAll(s, self, "$FENCE")
		s = strings.ReplaceAll(s, filepath.Dir(self), "$FENCEDIR")
	}
	s = strings.ReplaceAll(s, work, "$WORK")
	s = tempDigit.ReplaceAllString(s, "${1}N")
	return uidField.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "fence-runtime-") {
			return "fence-runtime-$UID"
		}
		return m[:strings.Index(m, ":")] + `: "$UID"`
	})
}

// foldedSpelling is p as the macOS profile's deny regexes spell it: each
// ASCII letter as a bracket of both cases, the rest quoted.
func foldedSpelling(p string) string {
	var b strings.Builder
	for _, r := range p {
		if l, u := unicode.ToLower(r), unicode.ToUpper(r); r < 0x80 && l != u {
			b.WriteString("[" + string(u) + string(l) + "]")
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	return b.String()
}

// lineDiff is the first line where want and got differ, with its
// neighbours.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			lo := max(0, i-2)
			return "want:\n" + strings.Join(w[lo:min(len(w), i+3)], "\n") + "\ngot:\n" + strings.Join(g[lo:min(len(g), i+3)], "\n")
		}
	}
	return ""
}
