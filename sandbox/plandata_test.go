package sandbox

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// templatePlans are plans of every builtin template, and of policies
// that fill the parts of a plan the templates leave empty (exec rules in
// argv mode, an upstream proxy with credentials, -p ports, limits), with
// the Landlock-only engine's rules.
func templatePlans(t *testing.T) map[string]*Plan {
	t.Helper()
	dir, home := mktree(t, "ws/.git/", "ws/src/a.go", "home/.ssh/id_ed25519"), ""
	home = dir + "/home"
	dir += "/ws"
	env := policy.Env{Dir: dir, Root: dir, Home: home, UserConfigDir: home + "/.config"}
	configs := map[string]policy.Config{}
	for _, name := range policy.TemplateNames() {
		r, err := policy.Load(policy.Options{Template: name, Dir: dir, Home: home, UserConfigDir: env.UserConfigDir})
		if err != nil {
			t.Fatal(err)
		}
		configs["template-"+name] = r.Config
	}
	var argv policy.Config
	argv.Command.Deny = []string{"git push", "rm -rf *"}
	argv.Command.Allow = []string{"git push --dry-run"}
	argv.Command.RuntimeExecPolicy = "argv"
	argv.Network.AllowedDomains = []string{"example.com"}
	argv.Network.UpstreamProxy = "http://user:secret@127.0.0.1:8080"
	argv.Network.DefaultAction = policy.DefaultActionProxy
	argv.Filesystem.AllowWrite = []string{"."}
	argv.Filesystem.DenyRead = []string{"~/.ssh/id_*", "**/.ENV"}
	configs["argv-upstream"] = argv
	plans := map[string]*Plan{}
	for name, c := range configs {
		pol := policy.Compile(c, env)
		o := Options{Argv: []string{"true"}, Environ: []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GH_TOKEN=x"},
			UID: 1000, GID: 1000, KeepFDs: []int{7}, Monitor: true, Seccomp: []string{"ptrace"}, LandlockOnly: true}
		if name == "argv-upstream" {
			o.Forwards = []Forward{{HostAddr: "127.0.0.1:8000", Port: 8000}}
			o.Limits = &policy.RunLimits{OpenFiles: 64, TmpSizeMB: 10}
		}
		p, err := NewPlan(pol, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.LandlockOnly == nil {
			t.Fatalf("%s: no Landlock-only rules", name)
		}
		plans[name] = p
	}
	return plans
}

// TestPlanDataRoundTrip holds MarshalData to being lossless: a plan read
// back is the plan made, deeply, environment and credentials included,
// and the exec rules read back judge as the policy's did.
func TestPlanDataRoundTrip(t *testing.T) {
	for name, p := range templatePlans(t) {
		b, err := p.MarshalData()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := UnmarshalPlanData(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := deepDiff(reflect.ValueOf(p), reflect.ValueOf(got), "Plan"); d != "" {
			t.Errorf("%s: the plan read back differs: %s", name, d)
		}
		if len(got.Env) == 0 || !reflect.DeepEqual(got.Env, p.Env) {
			t.Errorf("%s: Env = %q, want %q", name, got.Env, p.Env)
		}
		if name == "argv-upstream" {
			if got.Proxy.Upstream == nil || got.Proxy.Upstream.Authorization == "" {
				t.Errorf("%s: the upstream proxy's credentials were lost", name)
			}
			if got.ExecRules == nil {
				t.Fatalf("%s: no exec rules in argv mode", name)
			}
			for _, argv := range [][]string{{"git", "push"}, {"git", "push", "--dry-run"}, {"rm", "-rf", "x"}, {"ls"}} {
				if g, w := PreflightArgv(got.ExecRules.Compile(), argv).Blocked, PreflightArgv(p.ExecRules.Compile(), argv).Blocked; g != w {
					t.Errorf("%s: %q blocked %v after the round trip, %v before", name, argv, g, w)
				}
			}
		}
	}
}

// TestPrintedPlanHidesSecrets: the JSON people see holds neither the
// environment nor the upstream proxy's credentials.
func TestPrintedPlanHidesSecrets(t *testing.T) {
	p := templatePlans(t)["argv-upstream"]
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{p.Proxy.Upstream.Authorization, "GH_TOKEN", "PATH=/usr/bin"} {
		if secret == "" || strings.Contains(string(b), secret) {
			t.Errorf("the printed plan holds %q (or it is empty)", secret)
		}
	}
}

// deepDiff names the first place where a and b differ, unexported
// fields included ("" when they are deeply equal, but for empty slices
// read back as nil).
func deepDiff(a, b reflect.Value, at string) string {
	if a.Kind() != b.Kind() {
		return at + ": kinds differ"
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v, read back nil %v", at, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return deepDiff(a.Elem(), b.Elem(), at)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := deepDiff(a.Field(i), b.Field(i), at+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Array: // an empty slice reads back as nil, which no code tells apart
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d, read back %d", at, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := deepDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return at + ": maps differ"
		}
		return ""
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Sprintf("%s: %v, read back %v", at, a, b)
	}
	return ""
}
