package policy

import (
	"encoding/json"
	"strings"
)

// CommandRules are the parts of a Policy that judge a command line: what
// the supervisor needs to judge every execve of a sandbox in argv mode
// (command.runtimeExecPolicy "argv"). They are plain data, so that a plan
// can carry them and be stored; Compile makes them a Policy again.
type CommandRules struct {
	Dir                    string        `json:"dir"`
	Deny                   []CommandRule `json:"deny,omitempty"`
	Allow                  []CommandRule `json:"allow,omitempty"`
	Dynamic                string        `json:"dynamic"`
	SharedBinariesAccepted []string      `json:"sharedBinariesAccepted,omitempty"`
	SSH                    SSHPolicy     `json:"ssh,omitzero"`
}

// CommandRules are p's command rules, as data.
func (p *Policy) CommandRules() CommandRules {
	return CommandRules{Dir: p.Dir, Deny: p.CommandDeny, Allow: p.CommandAllow, Dynamic: p.CommandDynamic,
		SharedBinariesAccepted: p.SharedBinariesAccepted, SSH: p.SSH}
}

// Compile is a Policy that holds the rules c lists and nothing else, with
// the deny index built: what Preflight and the exec judge read.
func (c CommandRules) Compile() *Policy {
	p := &Policy{Dir: c.Dir, CommandDeny: c.Deny, CommandAllow: c.Allow,
		CommandDynamic: c.Dynamic, SharedBinariesAccepted: c.SharedBinariesAccepted, SSH: c.SSH}
	p.denyIndex = newCommandIndex(p.CommandDeny)
	return p
}

// UnmarshalJSON reads a rule as MarshalJSON wrote it, and splits its text
// into tokens again, as compiling did.
func (r *CommandRule) UnmarshalJSON(b []byte) error {
	type plain CommandRule // without this method
	var d plain
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*r = compileCommandRule(d.Text, d.Origin)
	r.Builtin, r.Firm = d.Builtin, d.Firm
	return nil
}

// AlwaysProtected reports whether r is one of the protections fence
// always adds, which no config can lift: its Key is of the "mandatory"
// kind.
func (r Rule) AlwaysProtected() bool { return strings.HasPrefix(r.Key, "mandatory.") }

// UnmarshalJSON reads a rule as it was written, with what matching needs
// of it made again (the pattern in lower case, when it ignores case).
// A rule as fence writes one (see flatRule) is read directly, the rest
// through encoding/json: a plan cache hit reads a thousand rules, and a
// json.Unmarshal of each, which checks and scans it again, was a seventh
// of the hit.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var d Rule
	if !flatRule(b, &d) {
		type plain Rule // without this method
		var p plain
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		d = Rule(p)
	}
	*r = d
	if r.Fold {
		r.folded = strings.ToLower(r.Pattern)
	}
	return nil
}
