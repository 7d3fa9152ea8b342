package sandbox

// Runtime is what a run adds to its plan when it starts: the values only
// the run can choose (the directories it made, where its proxies listen
// on the host) and the recorder that hears about its denials. The
// backends read the Plan as NewPlan made it and keep what they choose
// here; nothing writes into a Plan once it is made.
type Runtime struct {
	// Recorder, when set, hears about every denial the supervisor sees
	// (proxies, exec judging), for --report and the audit log.
	Recorder *Recorder
	// RuntimeDir is the XDG_RUNTIME_DIR made in the host's /tmp for a
	// plan with Mounts.RuntimeDirHost.
	RuntimeDir string
}

// Env is the command's environment: the plan's, with what the run chose.
func (rt *Runtime) Env(plan *Plan) []string {
	env := plan.Env
	if rt != nil && rt.RuntimeDir != "" {
		env = setEnv(env, "XDG_RUNTIME_DIR", rt.RuntimeDir)
	}
	return env
}
