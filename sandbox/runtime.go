package sandbox

import "slices"

// Runtime is what a run adds to its plan when it starts: the values only
// the run can choose (the directories it made, where its proxies listen
// on the host, the engine it could start) and the recorder that hears
// about its denials. The backends read the Plan as NewPlan made it and
// keep what they choose here; nothing writes into a Plan once it is made.
// Plan is the plan as the run runs it.
type Runtime struct {
	// Recorder, when set, hears about every denial the supervisor sees
	// (proxies, exec judging), for --report and the audit log.
	Recorder *Recorder
	// RuntimeDir is the XDG_RUNTIME_DIR made in the host's /tmp for a
	// plan with Mounts.RuntimeDirHost.
	RuntimeDir string
	// Proxies, when set, is where the proxies listen on the host's
	// loopback (the host's network, or the Landlock-only engine), or the
	// outer sandbox's that a nested run uses; nil when they listen in the
	// sandbox's network namespace at the plan's ports.
	Proxies *HostProxies
	// Outer, in a run nested in a fence sandbox, are that sandbox's
	// proxies (see OuterProxy).
	Outer *OuterProxy
	// LandlockOnly, when set, runs the plan's LandlockOnlyPlan.
	LandlockOnly *LandlockOnlyRun
	// Started, when set, is called once the sandbox's command has
	// started, or the sandbox could not be built: the run's start-up is
	// over (fence collects no garbage until then).
	Started func()
}

// HostProxies are the ports the proxies listen on, on the host's
// loopback; zero for none (a nested run whose outer sandbox offers none).
type HostProxies struct {
	HTTPPort, SOCKSPort int
}

// LandlockOnlyRun is what a run of the Landlock-only engine chose: its
// private TMPDIR, and fence's own terminals (see ownTerminals).
type LandlockOnlyRun struct {
	TmpDir    string
	Terminals []string
}

// Env is the command's environment: the plan's, with what the run chose.
func (rt *Runtime) Env(plan *Plan) []string {
	env := plan.Env
	if rt == nil {
		return env
	}
	if rt.RuntimeDir != "" {
		env = setEnv(env, "XDG_RUNTIME_DIR", rt.RuntimeDir)
	}
	if px := rt.Proxies; px != nil && px.HTTPPort != 0 {
		env = ProxyEnv(env, px.HTTPPort, px.SOCKSPort)
	}
	if ll := rt.LandlockOnly; ll != nil {
		env = setEnv(env, "TMPDIR", ll.TmpDir)
		if plan.Mounts.RuntimeDir != "" {
			// No private /tmp to make it in: the private TMPDIR, the
			// user's and 0700 too, removed at exit, serves.
			env = setEnv(env, "XDG_RUNTIME_DIR", ll.TmpDir)
		}
	}
	return env
}

// Plan is plan as this run runs it, a new value: its environment is
// Env's, its proxies know the outer sandbox's, and for the Landlock-only
// engine its mounts and Landlock rules are the plan's LandlockOnlyPlan
// with what the run chose put in, and its proxies and TCP rules are where
// the run's proxies listen on the host.
func (rt *Runtime) Plan(plan *Plan) *Plan {
	p := *plan
	p.Env = rt.Env(plan)
	if rt == nil {
		return &p
	}
	if plan.Proxy != nil {
		px := *plan.Proxy
		if rt.Outer != nil {
			px.Outer = rt.Outer
		}
		p.Proxy = &px
	}
	run := rt.LandlockOnly
	if run == nil || plan.LandlockOnly == nil {
		return &p
	}
	ll := plan.LandlockOnly
	p.Mounts = Mounts{Masks: slices.Clone(ll.Masks)}
	// On the host's network the TCP layer is the plan's (bind refused
	// unless network.allowLocalBinding); a filtered network's connect
	// list is the proxies' host ports.
	p.Landlock = Landlock{Rules: ll.rulesFor(plan, run, rt.RuntimeDir), TCP: plan.Landlock.TCP, MinABI: ll.MinABI, Reasons: ll.Reasons}
	if rt.Proxies != nil && p.Proxy != nil {
		p.Proxy.HTTPPort, p.Proxy.SOCKSPort = rt.Proxies.HTTPPort, rt.Proxies.SOCKSPort
		if p.Network == "none" {
			p.Landlock.TCP = ProxyTCP(p.Proxy, rt.Proxies.HTTPPort, rt.Proxies.SOCKSPort)
		}
	}
	return &p
}
