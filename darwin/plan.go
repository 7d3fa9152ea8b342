package darwin

import (
	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// Profile compiles the plan into an SBPL profile, from the plan's data
// alone: its rules (Plan.Rules), its network and its proxies' local
// ports.
func Profile(plan *sandbox.Plan, o ProfileOptions) string {
	return profileOf(policyOf(plan), o)
}

// policyOf is the part of a policy the profile is written from, made of
// the plan's data.
func policyOf(plan *sandbox.Plan) *policy.Policy {
	r := plan.Rules
	p := &policy.Policy{
		ReadMode: r.ReadMode, Read: r.Read, Execute: r.Execute, Write: r.Write, DenyRead: r.DenyRead, DenyWrite: r.DenyWrite,
		HostNetwork: plan.Network == "host", LocalBinding: r.LocalBinding,
		UnixSockets: r.UnixSockets, AllUnixSockets: r.AllUnixSockets,
		MachLookup: r.MachLookup, MachRegister: r.MachRegister, AllowPty: r.AllowPty, RuntimeExec: r.RuntimeExec,
		CommandDeny: r.CommandDeny, SharedBinariesAccepted: r.SharedBinariesAccepted,
	}
	if plan.Proxy != nil {
		p.LocalOutboundPorts = plan.Proxy.LocalPorts
	}
	return p
}
