package darwin

import (
	"errors"
	"flag"
	"fmt"
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

// testUserDirs are the per-user temp and cache directories (confstr's
// DARWIN_USER_TEMP_DIR and DARWIN_USER_CACHE_DIR) of the test's user.
var testUserDirs = []string{"/var/folders/zz/abc123/T", "/var/folders/zz/abc123/C"}

// testFinder is a disk where ~/.aws, ~/.ssh and ~/project/secrets are links
// elsewhere, and the command rules' binaries are at fixed places.
var testFinder = fakeFinder{
	links: map[string]string{"/Users/dev/.aws": "/Volumes/keys/aws", "/Users/dev/.ssh": "/Volumes/keys/ssh", "/Users/dev/project/secrets": "/Volumes/keys/project"},
	bins: map[string][]Executable{"shutdown": {{"/sbin/shutdown", "/sbin/shutdown"}}, "reboot": {{"/sbin/reboot", "/sbin/reboot"}},
		"sudo":    {{"/usr/bin/sudo", "/usr/bin/sudo"}},
		"python2": {{"/usr/local/bin/python2", "/usr/local/Cellar/python@2/2.7.18/bin/python2.7"}},
		"vi":      {{"/usr/bin/vi", "/usr/bin/vim"}}},
}

type fakeFinder struct {
	links map[string]string
	bins  map[string][]Executable
}

func (f fakeFinder) Resolve(p string) string {
	for link, target := range f.links {
		if p == link || strings.HasPrefix(p, link+"/") {
			return target + strings.TrimPrefix(p, link)
		}
	}
	return p
}

func (f fakeFinder) Executables(name string) []Executable { return f.bins[name] }

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
		DenyRead:  []string{"**/.env", "~/.ssh/id_*", "src/**/*.{pem,key}", "build/[ab]*/out", "[-_]cache"},
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
	"host-network": {Network: policy.Network{AllowedDomains: []string{"*"}}},
	"links-and-commands": {
		Filesystem: policy.Filesystem{AllowWrite: []string{"."}, DenyRead: []string{"~/.aws", "secrets", "~/Ünï/*"}},
		Command:    policy.Command{Deny: []string{"sudo", "python2", "git push", "/opt/tools/bin/deploy"}},
	},
}

// profiles are every golden's input: the templates and the edge cases.
func profiles(t *testing.T) map[string]Input {
	t.Helper()
	out := map[string]Input{}
	for _, name := range policy.TemplateNames() {
		out["template-"+name] = InputFromPolicy(templatePolicy(t, name), testOptions, testFinder)
	}
	for name, c := range edgeCases {
		out[name] = InputFromPolicy(policy.Compile(c, testEnv), testOptions, testFinder)
	}
	return out
}

func TestProfileGolden(t *testing.T) {
	for name, in := range profiles(t) {
		got, err := Build(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
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

// TestProfileChecks is the static checker on every generated profile and
// every golden: shape, vocabulary, dialect and precedence (checkForms),
// the baseline allowances, and each deny's spellings, ancestors and
// exec denies (checkInput).
func TestProfileChecks(t *testing.T) {
	for name, in := range profiles(t) {
		profile, err := Build(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rules := checkProfile(t, name, profile)
		checkBaseline(t, name, rules, in)
		checkInput(t, name, rules, in)
	}
	goldens, _ := filepath.Glob(filepath.Join("..", "testdata", "darwin", "*.sb"))
	if len(goldens) == 0 {
		t.Fatal("no golden profiles")
	}
	for _, g := range goldens {
		src, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		checkProfile(t, g, string(src))
	}
}

func checkProfile(t *testing.T, name, profile string) []rule {
	t.Helper()
	if err := checkComments(profile); err != nil {
		t.Fatalf("%s: %v in:\n%s", name, err, profile)
	}
	forms, err := parseSBPL(profile)
	if err != nil {
		t.Fatalf("%s: %v in:\n%s", name, err, profile)
	}
	rules, err := checkForms(forms)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rules
}

// checkBaseline asserts what every profile allows (issue items 1-6, 11,
// 12) and what none does.
func checkBaseline(t *testing.T, name string, rules []rule, in Input) {
	t.Helper()
	has := func(op, filter string) {
		t.Helper()
		if !slices.ContainsFunc(filtersOf(rules, "allow", op), func(f string) bool { return strings.Contains(f, filter) }) {
			t.Errorf("%s: no allow of %s %s", name, op, filter)
		}
	}
	has("file-ioctl", `(literal "/dev/tty")`)
	has("file-write-data", `(literal "/dev/tty")`)
	for _, d := range []string{`(literal "/dev/stdout")`, `(literal "/dev/stderr")`, `(regex #"^/dev/fd/[0-9]+$")`} {
		has("file-write-data", d)
	}
	for _, s := range []string{"com.apple.bsd.dirhelper", "com.apple.cfprefsd.agent", "com.apple.cfprefsd.daemon",
		"com.apple.SystemConfiguration.DNSConfiguration", "com.apple.PowerManagement.control", "com.apple.SecurityServer"} {
		has("mach-lookup", `(global-name "`+s+`")`)
	}
	has("system-socket", "(socket-domain AF_UNIX)")
	has("system-socket", "(require-all (socket-domain AF_SYSTEM) (socket-protocol 2))")
	has("ipc-posix-shm-read*", `(ipc-posix-name-prefix "apple.cfprefs.")`)
	has("ipc-posix-shm-read*", `(ipc-posix-name "apple.shm.notification_center")`)
	has("iokit-open", `(iokit-user-client-class "RootDomainUserClient")`)
	has("sysctl-read", `(sysctl-name-prefix "net.routetable.")`)
	has("sysctl-read", `(sysctl-name "security.mac.lockdown_mode_state")`)
	has("sysctl-write", `(sysctl-name "kern.grade_cputype")`)
	has("sysctl-write", `(sysctl-name "kern.tcsm_enable")`)
	for _, op := range []string{"ipc-posix-sem", "user-preference-read"} {
		if !allowsEverywhere(rules, op) {
			t.Errorf("%s: %s is not allowed", name, op)
		}
	}
	// The per-user directories get nothing beyond the policy's rules.
	for _, d := range testUserDirs {
		for _, op := range []string{"file-write*", "file-read*"} {
			if slices.ContainsFunc(filtersOf(rules, "allow", op), func(f string) bool { return strings.Contains(f, darwinPath(d)) }) {
				t.Errorf("%s: %s allowed in the per-user directory %s", name, op, d)
			}
		}
	}
	if in.ReadMode == policy.ReadDefaultDeny {
		has("file-read*", `(literal "/")`)
		has("file-read*", `(subpath "/private/var/run")`)
	}
	// Unix sockets: bound and reached below every writable path.
	for _, r := range in.Write {
		for _, f := range ruleFilters(t, r) {
			has("network-bind", "(local unix-socket ")
			if !slices.ContainsFunc(filtersOf(rules, "allow", "network-bind"), func(s string) bool { return strings.HasPrefix(s, "(local unix-socket") && strings.Contains(s, f) }) {
				t.Errorf("%s: no unix socket bind below %s", name, f)
			}
			if !slices.ContainsFunc(filtersOf(rules, "allow", "network-outbound"), func(s string) bool { return strings.HasPrefix(s, "(remote unix-socket") && strings.Contains(s, f) }) {
				t.Errorf("%s: no unix socket connect below %s", name, f)
			}
		}
	}
	// The host's own sockets below a writable path stay closed.
	if !in.AllUnixSockets && slices.ContainsFunc(in.Write, func(r PathRule) bool { return under(darwinPath(r.Pattern), "/private/tmp") }) &&
		!slices.ContainsFunc(in.UnixSockets, func(r PathRule) bool { return under(darwinPath(r.Pattern), "/private/tmp") }) &&
		!slices.ContainsFunc(filtersOf(rules, "deny", "network-outbound"), func(f string) bool { return strings.Contains(f, foldRegex(launchdSockets)) }) {
		t.Errorf("%s: launchd's sockets below a writable /tmp are reachable", name)
	}
	// What no profile does.
	for _, r := range rules {
		if r.action != "allow" {
			continue
		}
		for _, op := range r.ops {
			if strings.HasPrefix(op, "network") && len(r.filters) == 0 {
				t.Errorf("%s: %s allowed with no filter", name, op)
			}
			if op == "sysctl-read" && len(r.filters) == 0 {
				t.Errorf("%s: every sysctl readable", name)
			}
		}
		for _, f := range mapSexp(r.filters) {
			if strings.HasPrefix(f, `(sysctl-name-prefix "kern.`) {
				t.Errorf("%s: a kern. sysctl prefix: %s", name, f)
			}
			if f == "(remote unix-socket)" && !in.AllUnixSockets {
				t.Errorf("%s: every unix socket reachable, unlisted", name)
			}
		}
	}
}

// checkInput asserts the denies: every spelling of every deny rule
// denied for the right operations, the directories above it protected
// from rename, and an exec deny for every one-word command rule's
// binaries.
func checkInput(t *testing.T, name string, rules []rule, in Input) {
	t.Helper()
	denied := func(op, filter string) bool {
		return slices.Contains(filtersOf(rules, "deny", op), filter)
	}
	for _, group := range []struct {
		rules []PathRule
		ops   []string
	}{{in.DenyRead, []string{"file-read*", "file-read-data", "file-read-metadata", "file-write*", "process-exec"}}, {in.DenyWrite, []string{"file-write*"}}} {
		for _, r := range group.rules {
			filters := ruleFilters(t, r)
			if len(filters) < 1+len(r.Resolved) {
				t.Errorf("%s: %s has %d spellings, want at least %d", name, r.Pattern, len(filters), 1+len(r.Resolved))
			}
			for _, f := range filters {
				for _, op := range group.ops {
					if !denied(op, f) {
						t.Errorf("%s: %s not denied for %s", name, f, op)
					}
				}
			}
			// Below a writable path, binding a socket there is denied too.
			if slices.ContainsFunc(in.Write, func(w PathRule) bool { return !w.Glob && under(r.trees()[0], darwinPath(w.Pattern)) }) {
				for _, f := range filters {
					if !denied("network-bind", "(local unix-socket "+f+")") && !slices.ContainsFunc(filtersOf(rules, "deny", "network-bind"), func(s string) bool { return strings.Contains(s, f) }) {
						t.Errorf("%s: a unix socket may be bound at %s", name, f)
					}
				}
			}
			for _, f := range r.matchFilters() {
				for _, op := range group.ops {
					if !denied(op, f) {
						t.Errorf("%s: the match %s of %s not denied for %s", name, f, r.Pattern, op)
					}
				}
			}
			for _, start := range r.ancestorStarts() {
				for dir := start; dir != "/"; dir = parent(dir) {
					if !denied("file-write-unlink", r.exactFilter(dir)) {
						t.Errorf("%s: %s, above the deny %s, may be renamed", name, dir, r.Pattern)
					}
				}
			}
		}
	}
	for _, e := range in.ExecDenies {
		for _, b := range e.Binaries {
			if f := denyPath(b)[0]; !denied("process-exec", f) || !denied("file-read-data", f) {
				t.Errorf("%s: %s (command.deny %q) may be run or read (and copied)", name, b, e.Rule)
			}
		}
	}
}

// ruleFilters are the filters a rule's spellings must appear as.
func ruleFilters(t *testing.T, r PathRule) []string {
	t.Helper()
	var out []string
	for _, s := range r.spellings() {
		if !r.Glob && !r.Fold {
			out = append(out, "(subpath "+sbplString(s)+")")
			continue
		}
		re, err := globRegex(s, ruleMode(s, r.Fold), r.Fold)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, "(regex "+sbplRegex(re)+")")
	}
	return out
}

// TestPrecedenceChecker shows the checker failing on the profiles the
// precedence rule forbids.
func TestPrecedenceChecker(t *testing.T) {
	for name, src := range map[string]string{
		"specific allow, wildcard deny": `(version 1) (deny default (with message "fence:default")) (allow file-read-metadata)
			(deny file-read* (subpath "/x") (with message "fence:r"))`,
		"exec allow, read deny": `(version 1) (deny default (with message "fence:default")) (allow file-read-data process-exec (subpath "/x"))
			(deny file-read* (subpath "/x/y") (with message "fence:r"))`,
		"allow after deny": `(version 1) (deny default (with message "fence:default")) (deny file-write* (subpath "/x") (with message "fence:r"))
			(allow file-write* (subpath "/x"))`,
		"backslash in brackets": `(version 1) (deny default (with message "fence:default")) (allow file-read* (regex #"^/[\-_]x$"))`,
		"unknown operation":     `(version 1) (deny default (with message "fence:default")) (allow file-read-xattr)`,
	} {
		forms, err := parseSBPL(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := checkForms(forms); err == nil {
			t.Errorf("%s: the checker accepts it", name)
		}
	}
}

// TestRefusesInexactDeny: a deny pattern the dialect cannot match
// exactly is refused, naming its file, line and column.
func TestRefusesInexactDeny(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fence.jsonc")
	src := "{\n  \"filesystem\": {\n    \"denyRead\": [\"build/a?c\"]\n  }\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := policy.Load(policy.Options{Settings: cfg, Dir: dir, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Dir: dir, Home: dir, Position: func(key, value string) string {
		o, _ := res.Origin(key, value)
		return fmt.Sprintf("%s:%d:%d", o.Source.Path, o.Pos.Line, o.Pos.Col)
	}}
	in := InputFromPolicy(policy.Compile(res.Config, env), testOptions, testFinder)
	_, err = Build(in)
	var u *Unexpressible
	if !errors.As(err, &u) || !strings.HasPrefix(err.Error(), cfg+":3:18: filesystem.denyRead \"build/a?c\": ") {
		t.Fatalf("Build = %v, want a refusal at %s:3:18", err, cfg)
	}
	// The shim the runner calls today fails closed: it denies everything.
	if p := profileOf(policy.Compile(res.Config, env), testOptions); strings.Contains(p, "(allow") {
		t.Errorf("a refused policy still allows:\n%s", p)
	}
}

func TestCheckRunRefusesArgvMode(t *testing.T) {
	p := policy.Compile(policy.Config{Command: policy.Command{RuntimeExecPolicy: "argv"}}, testEnv)
	err := CheckRun(InputFromPolicy(p, testOptions, testFinder))
	if err == nil || !strings.Contains(err.Error(), `runtimeExecPolicy "argv"`) {
		t.Fatalf("CheckRun = %v, want a refusal of argv mode", err)
	}
	if err := CheckRun(InputFromPolicy(policy.Compile(policy.Config{}, testEnv), testOptions, testFinder)); err != nil {
		t.Fatalf("CheckRun refuses the default policy: %v", err)
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
	p, err := Build(InputFromPolicy(policy.Compile(edgeCases["odd-paths"], testEnv), testOptions, testFinder))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p, "(allow default") && !strings.Contains(p, `ev\"il) (allow default`) {
		t.Errorf("a path broke out of its string:\n%s", p)
	}
}

func TestProfileMapsPrivateDirs(t *testing.T) {
	p, err := Build(InputFromPolicy(policy.Compile(policy.Config{Filesystem: policy.Filesystem{AllowWrite: []string{"/tmp/x", "/var/log/y", "/etc/z"}}}, testEnv), testOptions, testFinder))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(subpath "/private/tmp/x")`, `(subpath "/private/var/log/y")`, `(subpath "/private/etc/z")`} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %s", want)
		}
	}
	if !slices.Contains(strings.Split(p, "\n"), `(allow file-read* file-write* (subpath "/private/var/folders/zz/fence-tmp"))`) {
		t.Errorf("the private TMPDIR is not writable:\n%s", p)
	}
}

// TestTagInMessages: a run's tag starts every message.
func TestTagInMessages(t *testing.T) {
	o := testOptions
	o.Tag = "fence-0123456789abcdef"
	p, err := Build(InputFromPolicy(policy.Compile(edgeCases["globs"], testEnv), o, testFinder))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p, `"fence:`) || !strings.Contains(p, `(with message "fence-0123456789abcdef:filesystem.denyRead **/.env")`) {
		t.Errorf("the tag does not start every message:\n%s", p)
	}
}

// TestTerminals: the command's own terminals and /dev/tty are opened,
// read, written and ioctl'd; every other /dev/ttysN is closed, whatever
// the reads allow, unless allowPty (its ptys are /dev/ttysN too).
func TestTerminals(t *testing.T) {
	for _, tc := range []struct {
		terms []string
		pty   bool
	}{{[]string{"/dev/ttys004"}, false}, {[]string{"/dev/console", "/dev/ttys007"}, false}, {nil, false}, {[]string{"/dev/ttys004"}, true}} {
		o := testOptions
		o.Terminals = tc.terms
		p, err := Build(InputFromPolicy(policy.Compile(policy.Config{AllowPty: tc.pty}, testEnv), o, testFinder))
		if err != nil {
			t.Fatal(err)
		}
		rules := checkProfile(t, "terminals", p)
		allowed := strings.Join(filtersOf(rules, "allow", "file-ioctl"), " ")
		for _, term := range append([]string{"/dev/tty"}, tc.terms...) {
			if !strings.Contains(allowed, `(literal "`+term+`")`) {
				t.Errorf("%v: %s is not the command's:\n%s", tc.terms, term, p)
			}
		}
		want := `(regex #"^/dev/ttys[0-9]+$")`
		for _, term := range tc.terms {
			want += ` (require-not (literal "` + term + `"))`
		}
		if len(tc.terms) > 0 {
			want = "(require-all " + want + ")"
		}
		denied := slices.ContainsFunc(rules, func(r rule) bool {
			return r.action == "deny" && slices.Contains(r.ops, "file-read*") && slices.Contains(r.ops, "file-ioctl") && slices.Contains(r.ops, "file-write*") &&
				slices.Contains(mapSexp(r.filters), want)
		})
		if denied == tc.pty {
			t.Errorf("%v, allowPty %v: other terminals denied %v:\n%s", tc.terms, tc.pty, denied, p)
		}
	}
}

// TestExecDenyAcceptedShared: a command rule whose binary is another
// program that command.acceptSharedBinaryCannotRuntimeDeny names gets no
// exec deny (preflight alone blocks it); otherwise the link and its
// target are both denied.
func TestExecDenyAcceptedShared(t *testing.T) {
	for _, accept := range []bool{false, true} {
		c := policy.Command{Deny: []string{"vi"}}
		if accept {
			c.AcceptSharedBinaryCannotRuntimeDeny = []string{"vim"}
		}
		in := InputFromPolicy(policy.Compile(policy.Config{Command: c}, testEnv), testOptions, testFinder)
		denied := slices.ContainsFunc(in.ExecDenies, func(e ExecDeny) bool { return e.Rule == "vi" })
		if denied == accept {
			t.Errorf("accepted %v: exec denies %v", accept, in.ExecDenies)
		}
		if !accept && !slices.ContainsFunc(in.ExecDenies, func(e ExecDeny) bool { return slices.Equal(e.Binaries, []string{"/usr/bin/vi", "/usr/bin/vim"}) }) {
			t.Errorf("the link and its target are not both denied: %v", in.ExecDenies)
		}
	}
}

// TestUnicodeForms: a deny of a path with letters outside ASCII denies
// both its composed and its decomposed spelling (macOS's file systems
// take either for the same file), whichever form the policy holds.
func TestUnicodeForms(t *testing.T) {
	nfc, nfd := "/Users/dev/\u00dcn\u00ef", "/Users/dev/U\u0308ni\u0308"
	for _, written := range []string{nfc, nfd} {
		in := InputFromPolicy(policy.Compile(policy.Config{Filesystem: policy.Filesystem{DenyRead: []string{written + "/*", written + "/x"}}}, testEnv), testOptions, testFinder)
		p, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		denied := strings.Join(filtersOf(checkProfile(t, "unicode", p), "deny", "file-read-data"), " ")
		for _, form := range []string{nfc, nfd} {
			for _, c := range []struct {
				pattern string
				mode    foldMode
			}{{form + "/*", foldLower}, {form + "/x", foldEqual}} {
				re, err := globRegex(c.pattern, c.mode, true)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(denied, sbplRegex(re)) {
					t.Errorf("written %+q: %+q is not denied:\n%s", written, c.pattern, denied)
				}
			}
		}
	}
}
