package policy

// LoaderEnvPatterns are the variables fence removes from every command's
// environment whatever env.allow says: the dynamic loaders read them to
// load code into each program the command starts.
var LoaderEnvPatterns = []string{"LD_*", "DYLD_*"}

// EnvSource names the file, template or command line that wrote the
// env.deny or env.allow pattern (key "env.deny" or "env.allow"); empty
// when unknown.
func (p *Policy) EnvSource(key, pattern string) string {
	return p.envOrigins[key+"\x00"+pattern]
}

// envOrigins maps each env.deny and env.allow pattern to where it was
// written, keyed like domainOrigins.
func envOrigins(e EnvVars, env Env) map[string]string {
	out := map[string]string{}
	if env.Origin == nil {
		return out
	}
	for key, patterns := range map[string][]string{"env.deny": e.Deny, "env.allow": e.Allow} {
		for _, v := range patterns {
			out[key+"\x00"+v] = env.Origin(key, v)
		}
	}
	return out
}

// envEntries lists the env rules of p for the effective policy: the
// loader's variables, then env.deny; env.allow apart.
func (p *Policy) envEntries() (deny, allow []Entry) {
	deny, allow = []Entry{}, []Entry{}
	for _, v := range LoaderEnvPatterns {
		deny = append(deny, Entry{Value: v, Rule: "sandbox.loaderEnv", Source: "fence (the loaders' variables; env.allow does not keep them)"})
	}
	for _, v := range p.EnvDeny {
		deny = append(deny, Entry{Value: v, Rule: "env.deny", Source: p.EnvSource("env.deny", v)})
	}
	for _, v := range p.EnvAllow {
		allow = append(allow, Entry{Value: v, Rule: "env.allow", Source: p.EnvSource("env.allow", v)})
	}
	return deny, allow
}
