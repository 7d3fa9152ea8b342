package darwin

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// ProfileFor compiles the plan into an SBPL profile, or says why the
// macOS backend refuses it (what the runner cannot enforce, or a pattern
// the profile cannot match exactly): exit 125. The disk is asked, at
// the command's PATH, only what the plan does not carry yet: deny rules'
// links and the binaries of one-word command rules.
//
// The writable trees are walked for the host's unix sockets (see
// socketscan.go); the warnings say which trees that walk could not
// finish, closed to unix sockets for the run.
func ProfileFor(plan *sandbox.Plan, o ProfileOptions) (profile string, warnings []string, err error) {
	if err := refusal(plan); err != nil {
		return "", nil, err
	}
	in := InputFromPlan(plan, o, HostFinder{Path: envValue(plan.Env, "PATH")})
	if err := CheckRun(in); err != nil {
		return "", nil, err
	}
	in.scanSockets()
	profile, err = Build(in)
	return profile, socketWarnings(in), err
}

// scanSockets adds the sockets found below the writable trees to the
// plan's, or fails those trees closed.
func (in *Input) scanSockets() {
	if in.AllUnixSockets {
		return
	}
	roots := scanRoots(*in)
	private := slices.DeleteFunc(in.privateDirs(), func(d string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return under(darwinPath(r), darwinPath(d)) })
	})
	s := scanSockets(roots, []string{in.TmpDir}, private)
	if len(s.found) > sandbox.MaxHiddenSockets {
		s.cut, s.found = appendNew(s.cut, outermost(roots)...), nil
	}
	in.HostSockets = appendNew(in.HostSockets, s.found...)
	in.SocketScanCut = appendNew(in.SocketScanCut, s.cut...)
}

// privateDirs are the home's privacy-guarded directories (see
// privacyDirs), in each spelling of the home.
func (in *Input) privateDirs() []string {
	var out []string
	for _, home := range []string{in.Home, in.HomeResolved} {
		if home != "" {
			for _, d := range privacyDirs {
				out = append(out, path.Join(home, d))
			}
		}
	}
	return out
}

// InputFromPlan maps a plan to the compiler's input: its rules, network
// and proxies' local ports, and its programs' other names (hard links and
// copies of a denied command's binary) besides what f finds.
func InputFromPlan(plan *sandbox.Plan, o ProfileOptions, f Finder) Input {
	pol := policyOf(plan)
	in := InputFromPolicy(pol, o, f)
	if h := envValue(plan.Env, "HOME"); h != "" {
		in.Home = h
	}
	in.HomeResolved = resolvedHome(in.Home, f)
	addMatches(in.DenyRead, plan.Mounts.Masks, func(m sandbox.Mask) (string, string, bool) { return m.Why, m.Path, !m.Socket })
	addMatches(in.DenyWrite, plan.Mounts.Binds, func(b sandbox.Bind) (string, string, bool) { return b.Why, b.Path, !b.Write })
	// fence's own $SSH_AUTH_SOCK, which env rules cannot remove; else the
	// command's.
	if s := cmp.Or(o.SSHAuthSock, envValue(plan.Env, "SSH_AUTH_SOCK")); path.IsAbs(s) {
		in.SSHAuthSock = s
		if real := f.Resolve(s); real != s {
			in.SSHAuthSockResolved = real
		}
	}
	for _, s := range plan.HostSockets {
		in.HostSockets = appendNew(in.HostSockets, darwinPath(s))
	}
	for _, id := range plan.Programs {
		i := slices.IndexFunc(in.ExecDenies, func(e ExecDeny) bool { return e.Name == id.Name })
		if i < 0 {
			rule := slices.IndexFunc(pol.CommandDeny, func(r policy.CommandRule) bool { return oneWord(r) && r.Tokens[0] == id.Name })
			if rule < 0 {
				continue // a name of a longer rule (git for "git push"), judged at preflight
			}
			in.ExecDenies = append(in.ExecDenies, ExecDeny{Rule: pol.CommandDeny[rule].Text, Name: id.Name})
			i = len(in.ExecDenies) - 1
		}
		for _, p := range append([]string{id.Path}, id.Other...) {
			if base := filepath.Base(p); base == id.Name || !slices.Contains(pol.SharedBinariesAccepted, base) {
				in.ExecDenies[i].Binaries = appendNew(in.ExecDenies[i].Binaries, p)
			}
		}
	}
	return in
}

// addMatches gives each rule the paths the plan protects for it (a mask
// or read-only bind whose why is the rule's origin), in macOS's spelling;
// a path a plain rule's spellings cover already is left out, and each
// path goes to the first rule of its origin only.
func addMatches[T any](rules []PathRule, items []T, of func(T) (why, path string, ok bool)) {
	taken := map[string]bool{}
	for i := range rules {
		r := &rules[i]
		if r.Origin == "" {
			continue
		}
		for _, it := range items {
			why, p, ok := of(it)
			p = darwinPath(p)
			if !ok || why != r.Origin || taken[p] || !r.Glob && slices.ContainsFunc(r.spellings(), func(s string) bool { return under(p, s) }) {
				continue
			}
			taken[p] = true
			r.Matches = append(r.Matches, p)
		}
	}
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

// envValue is the value of name in env, or "".
func envValue(env []string, name string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// NetworkDebug says, for -d, where the command's servers may listen and
// what of the host's loopback it reaches under the plan on macOS, where
// the sandbox has no network of its own.
func NetworkDebug(plan *sandbox.Plan) string {
	r := plan.Rules
	switch {
	case plan.Network == "host" && r.LocalBinding:
		return "macOS: the network is the host's; servers may listen on its addresses (network.allowLocalBinding true)"
	case plan.Network == "host":
		return "macOS: the network is the host's; servers may not listen (network.allowLocalBinding: true lets them, on every address)"
	}
	ports := "no other port"
	if plan.Proxy != nil && len(plan.Proxy.LocalPorts) > 0 {
		ports = fmt.Sprintf("the ports %v (network.allowLocalOutboundPorts)", plan.Proxy.LocalPorts)
	}
	listen := "servers may not listen (network.allowLocalBinding: true lets them, on loopback)"
	if r.LocalBinding {
		listen = "servers may listen on loopback (network.allowLocalBinding true)"
	}
	return "macOS: " + listen + "; the host's loopback is reached at the proxies' ports and " + ports +
		": Seatbelt cannot tell the command's own servers from the host's, so a client in the sandbox reaches its own server only at a listed port"
}
