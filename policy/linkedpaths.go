package policy

// A LinkedPath is where a symlink of a path fence always protects leads:
// the protected path itself a link, or a link inside a protected
// directory (see sandbox.LinkedProtections). What reads the link reads
// the target, so the target is protected under the same rule.
type LinkedPath struct {
	Path   string // the target, resolved
	Link   string // the link that leads there
	Key    string // the rule of the protected path
	Origin string
}

// ProtectLinked keeps each linked target read-only under the rule of the
// path that leads to it, naming the link, so that `fence check` and the
// hooks judge the target as the sandbox does.
func (p *Policy) ProtectLinked(linked []LinkedPath) {
	for _, l := range linked {
		p.DenyWrite = append(p.DenyWrite, Rule{
			Pattern: l.Path, Key: l.Key, Source: "fence (always protected)",
			Origin: l.Origin + " (where the symlink " + l.Link + " leads)",
		})
	}
}
