package policy

import "strings"

// Decision is the verdict on one access to one path, with the rule that
// decided it, so that an agent's own file tools can enforce exactly what
// the sandbox does and say why.
type Decision struct {
	Allowed    bool    `json:"allowed"`
	Access     string  `json:"access"`         // read, write or exec
	Requested  string  `json:"requested"`      // the path as asked
	Path       string  `json:"path,omitempty"` // resolved
	Rule       string  `json:"rule"`           // such as filesystem.denyWrite or mandatory.shellStartup
	Pattern    *string `json:"pattern"`        // as written; null for fence's own defaults
	Source     string  `json:"source,omitempty"`
	Suggestion string  `json:"suggestion,omitempty"`
	// Note is what else the run does about the path, such as creating
	// the directory that makes it writable.
	Note string `json:"note,omitempty"`
}

// Accesses are the kinds of access CheckPath judges.
var Accesses = []string{"read", "write", "exec"}

// CheckPath judges access to an absolute, resolved path the way the
// sandbox enforces it: denyRead beats everything, denyWrite and the
// protections beat allowWrite, and reads are open unless defaultDenyRead.
// /tmp is the sandbox's own: what the policy does not name there is not
// the host's.
func (p *Policy) CheckPath(access, requested, path string) Decision {
	d := Decision{Access: access, Requested: requested, Path: path}
	if r := firstCovering(p.DenyRead, path); r != nil {
		return d.deny(r, "remove the path from filesystem.denyRead if the command needs it")
	}
	switch access {
	case "write":
		return p.checkWrite(d)
	case "exec":
		if r := firstCovering(p.Execute, path); r != nil {
			return d.allow(r)
		}
	}
	return p.checkRead(d)
}

func (p *Policy) checkRead(d Decision) Decision {
	if r := p.coveringAllow(d.Path); r != nil {
		return d.allow(r)
	}
	if under(d.Path, p.Dir) {
		return d.allowDefault("workspace")
	}
	if under(d.Path, "/tmp") {
		return d.denyDefault("sandbox.privateTmp", "the sandbox's /tmp is its own; add the path to filesystem.allowRead to see the host's")
	}
	if p.ReadMode == ReadOpen {
		return d.allowDefault("filesystem (reads are open)")
	}
	key := "filesystem.defaultDenyRead"
	if p.ReadMode == ReadStrict {
		key = "filesystem.strictDenyRead"
	}
	return d.denyDefault(key, "add the path to filesystem.allowRead: fence config allow read "+d.Path)
}

func (p *Policy) checkWrite(d Decision) Decision {
	if r := firstCovering(p.DenyWrite, d.Path); r != nil {
		return d.deny(r, "")
	}
	if r := firstCovering(p.Write, d.Path); r != nil {
		return d.allow(r)
	}
	suggestion := "add the path to filesystem.allowWrite: fence config allow write " + d.Path
	if under(d.Path, "/tmp") {
		r, bound := p.boundReadOnly(d.Path)
		switch {
		case !bound:
			return d.allowDefault("sandbox.privateTmp")
		case r != nil:
			// The rule that binds it read-only into the private /tmp.
			return d.deny(r, "the sandbox binds it read-only from the host into its own /tmp; "+suggestion)
		}
	}
	return d.denyDefault("filesystem.allowWrite", suggestion)
}

// boundReadOnly reports whether path, under /tmp, is in something the
// sandbox binds from the host into its private /tmp without write access:
// the working directory, or a readable or executable path, whose rule it
// returns.
func (p *Policy) boundReadOnly(path string) (*Rule, bool) {
	for _, rules := range [][]Rule{p.Read, p.Execute} {
		for i := range rules {
			if under(rules[i].Pattern, "/tmp") && Covers(rules[i].Pattern, path, rules[i].Fold) {
				return &rules[i], true
			}
		}
	}
	return nil, under(p.Dir, "/tmp") && under(path, p.Dir)
}

// WritableBy is every allowWrite rule that covers path, in order: the
// sandbox makes path writable through any of them that exists at start.
func (p *Policy) WritableBy(path string) []Rule {
	var out []Rule
	for i := range p.Write {
		if firstCovering(p.Write[i:i+1], path) != nil {
			out = append(out, p.Write[i])
		}
	}
	return out
}

// coveringAllow is the first rule that makes path readable.
func (p *Policy) coveringAllow(path string) *Rule {
	for _, rules := range [][]Rule{p.Read, p.Write, p.Execute} {
		if r := firstCovering(rules, path); r != nil {
			return r
		}
	}
	return nil
}

// firstCovering is the first of rules that covers path. It folds path
// once for all the rules that fold case.
func firstCovering(rules []Rule, path string) *Rule {
	folded := ""
	for i := range rules {
		r := &rules[i]
		if !r.Glob {
			if coversPlain(r.Pattern, path, r.Fold) {
				return r
			}
			continue
		}
		pattern, p := r.Pattern, path
		if r.Fold {
			if folded == "" {
				folded = strings.ToLower(path)
			}
			pattern, p = r.folded, folded
			if pattern == "" {
				pattern = strings.ToLower(r.Pattern)
			}
		}
		if coversGlob(pattern, p) {
			return r
		}
	}
	return nil
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func (d Decision) allow(r *Rule) Decision {
	d.Allowed, d.Rule, d.Source = true, r.Key, r.Source
	if r.Text != "" {
		d.Pattern = &r.Text
	}
	return d
}

func (d Decision) deny(r *Rule, suggestion string) Decision {
	d.Rule, d.Source, d.Suggestion = r.Key, r.Source, suggestion
	if r.Text != "" {
		d.Pattern = &r.Text
	}
	if strings.HasPrefix(r.Key, "mandatory.") {
		d.Suggestion = "fence always protects this path; no config can lift it"
		if r.Key == "mandatory.gitConfig" {
			d.Suggestion = "set filesystem.allowGitConfig to let the command write .git/config"
		}
		if r.Key == "mandatory.pathDir" {
			d.Suggestion = "name the directory itself in filesystem.allowWrite to make it writable (" + pathDirHint + ")"
		}
	}
	return d
}

func (d Decision) allowDefault(rule string) Decision {
	d.Allowed, d.Rule = true, rule
	return d
}

func (d Decision) denyDefault(rule, suggestion string) Decision {
	d.Rule, d.Suggestion = rule, suggestion
	return d
}
