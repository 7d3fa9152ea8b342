package darwin

import (
	"reflect"
	"slices"
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestProfileFromPlan: the input compiled from a plan is the one
// compiled from its policy, for every template and edge case: the plan
// carries everything the profile reads. (Its programs, found on this
// machine's disk, are left aside here; TestPlanPrograms has them.)
func TestProfileFromPlan(t *testing.T) {
	pols := map[string]*policy.Policy{}
	for _, name := range policy.TemplateNames() {
		pols["template-"+name] = templatePolicy(t, name)
	}
	for name, c := range edgeCases {
		pols[name] = policy.Compile(c, testEnv)
	}
	for name, pol := range pols {
		plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plan.Programs, plan.HostSockets = nil, nil // the machine's own
		got, want := InputFromPlan(plan, testOptions, testFinder), InputFromPolicy(pol, testOptions, testFinder)
		for _, rules := range [][]PathRule{got.DenyRead, got.DenyWrite} {
			for i := range rules {
				rules[i].Matches = nil // what the plan found on this machine (TestGlobMatches)
			}
		}
		got.Home, want.Home = "", "" // the plan's comes from its environment
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the input from the plan differs from the policy's:\n%+v\n%+v", name, got, want)
		}
	}
}

// TestPlanPrograms: a denied command's other names that the plan found
// (hard links, copies) are denied too, but not a program of another name
// the policy accepts as shared, nor the name of a longer rule.
func TestPlanPrograms(t *testing.T) {
	pol := policy.Compile(policy.Config{Command: policy.Command{Deny: []string{"sudo", "git push"}, AcceptSharedBinaryCannotRuntimeDeny: []string{"doas"}}}, testEnv)
	plan, err := sandbox.NewPlan(pol, sandbox.Options{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	plan.Programs = []sandbox.ProgramIdentity{
		{Name: "sudo", Path: "/usr/bin/sudo", Other: []string{"/opt/bin/sudo-copy", "/opt/bin/doas"}},
		{Name: "git", Path: "/usr/bin/git"},
	}
	in := InputFromPlan(plan, testOptions, testFinder)
	i := slices.IndexFunc(in.ExecDenies, func(e ExecDeny) bool { return e.Name == "sudo" })
	if i < 0 || !slices.Contains(in.ExecDenies[i].Binaries, "/opt/bin/sudo-copy") || !slices.Contains(in.ExecDenies[i].Binaries, "/usr/bin/sudo") ||
		slices.Contains(in.ExecDenies[i].Binaries, "/opt/bin/doas") {
		t.Errorf("exec denies %+v: want sudo's file and its copy, not the accepted doas", in.ExecDenies)
	}
	if slices.ContainsFunc(in.ExecDenies, func(e ExecDeny) bool { return e.Name == "git" }) {
		t.Errorf("git is denied at exec for the rule \"git push\": %+v", in.ExecDenies)
	}
	if _, err := Build(in); err != nil {
		t.Fatal(err)
	}
}
