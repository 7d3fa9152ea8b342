package policy

import "slices"

// EmptyConfig is the config file the chain starts from when that file held
// nothing but whitespace and comments, so that the builtin default applies
// in its place (`fence config show` labels it "builtin default (no config
// loaded from FILE)"). It is "" when the chain starts from a config, or
// when no file was found at all.
func (r *Resolved) EmptyConfig() string {
	for _, s := range r.Chain {
		if s.Kind == KindCommandLine {
			continue
		}
		if s.Kind == KindDefault && slices.Contains(r.Files, s.Path) {
			return s.Path
		}
		return ""
	}
	return ""
}

// RunWarnings are the findings of Lint that a run states too, before the
// command starts: a policy that lets the command write ~/.ssh, and
// allowLocalOutbound without ports.
func RunWarnings(r *Resolved, dir, home string) []Warning {
	l := linter{r: r, dir: dir, home: home}
	l.sshWritable()
	l.agentStateWritable()
	l.localOutboundWithoutPorts()
	return l.out
}
