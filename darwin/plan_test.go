package darwin

import (
	"testing"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestProfileFromPlan: the profile compiled from a plan is the one
// compiled from its policy, for every template and edge case: the plan
// carries everything the profile reads.
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
		if got, want := Profile(plan, testOptions), profileOf(pol, testOptions); got != want {
			t.Errorf("%s: the profile from the plan differs from the policy's", name)
		}
	}
}
