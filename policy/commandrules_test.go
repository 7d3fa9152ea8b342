package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestAlwaysProtectedByKey: the kind of a rule, not its message, says
// that fence always adds it, and it agrees with what the message says for
// every rule of every template.
func TestAlwaysProtectedByKey(t *testing.T) {
	home := t.TempDir()
	env := Env{Dir: home + "/ws", Root: home + "/ws", Home: home, UserConfigDir: home + "/.config", ConfigFiles: []string{home + "/.fence.json"}}
	for _, name := range TemplateNames() {
		r, err := Load(Options{Template: name, Dir: env.Dir, Home: home, UserConfigDir: env.UserConfigDir})
		if err != nil {
			t.Fatal(err)
		}
		p := Compile(r.Config, env)
		for _, rule := range slices.Concat(p.DenyWrite, p.DenyRead, p.Write, p.Read, p.Execute) {
			if said := strings.HasPrefix(rule.Origin, "always protected"); rule.AlwaysProtected() != said {
				t.Errorf("%s: %s (key %q): AlwaysProtected %v, its origin %q", name, rule.Pattern, rule.Key, rule.AlwaysProtected(), rule.Origin)
			}
		}
	}
}

// TestCommandRulesRoundTrip: command rules read back from JSON judge as
// the policy's own.
func TestCommandRulesRoundTrip(t *testing.T) {
	var c Config
	c.Command.Deny = []string{"git push", "npm publish*", "*curl* -d"}
	c.Command.Allow = []string{"git push --dry-run"}
	p := Compile(c, Env{Dir: "/w", Home: "/h"})
	b, err := json.Marshal(p.CommandRules())
	if err != nil {
		t.Fatal(err)
	}
	var back CommandRules
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	q := back.Compile()
	for _, argv := range [][]string{{"git", "push"}, {"git", "push", "--dry-run"}, {"npm", "publish"}, {"xcurlx", "-d"}, {"ls"}} {
		if got, want := q.DecideCommand(argv).Allowed, p.DecideCommand(argv).Allowed; got != want {
			t.Errorf("%q: allowed %v after the round trip, %v before", argv, got, want)
		}
	}
}
