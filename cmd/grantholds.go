package cmd

import (
	"fmt"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// editedChain is the chain a config edit works in: the edited file, read
// from memory, with everything it extends; err is why it did not load.
type editedChain struct {
	res *policy.Resolved
	pol *policy.Policy
	err error
}

// loadedEdit loads the chain with e.new in place of e.path, as a run that
// finds that file would: by discovery when it is the project file, found
// as named (which may lead to e.path through a link), else as a settings
// file.
func loadedEdit(opts policy.Options, e *configEdit, named string) editedChain {
	opts.Settings, opts.Template = "", ""
	opts.FS = overlayFS{paths: []string{e.path, named}, data: e.new}
	if named == "" {
		opts.Settings = e.path
	}
	res, err := policy.Load(opts)
	if err != nil {
		return editedChain{err: err}
	}
	return editedChain{res: res, pol: compileResolved(res, opts)}
}

// holds says how the chain already does what g asks, "path is already
// allowed by RULE (where)", or returns "" when g would change something
// or fence cannot tell: a glob, a wildcard domain, a command rule, or a
// chain that does not load.
//
// An allow is already there when a rule of the chain, or a default that
// holds wherever fence runs from, allows the access; the sandbox's own
// /tmp does not count, since a rule binds the host's path there. A deny is
// already there only when a deny rule denies it: a path that is merely
// not allowed would open to a later, wider allow rule, which a deny rule
// beats.
func (c editedChain) holds(g grant) string {
	if c.err != nil {
		return ""
	}
	switch {
	case g.access != "" && g.path != "":
		return c.holdsPath(g)
	case g.key == "network.allowedDomains" || g.key == "network.deniedDomains":
		return c.holdsDomain(g)
	}
	return ""
}

func (c editedChain) holdsPath(g grant) string {
	d := c.pol.CheckPath(g.access, g.value, g.path)
	var holds bool
	if g.allows() {
		holds = d.Allowed && (d.Pattern != nil || d.Rule == "filesystem (reads are open)" || d.Rule == "filesystem.defaultDenyRead" || d.Rule == "workspace")
	} else {
		holds = !d.Allowed && d.Pattern != nil && (d.Rule == "filesystem.denyRead" || d.Rule == "filesystem.denyWrite")
	}
	if !holds {
		return ""
	}
	verdict, by := "denied", d.Rule
	if d.Allowed {
		verdict = "allowed"
	}
	switch {
	case d.Pattern != nil:
		by = c.rule(d.Rule, *d.Pattern)
	case d.Rule == "workspace":
		by = "the working directory, which is readable"
	case d.Rule == "filesystem.defaultDenyRead":
		by = "the system paths filesystem.defaultDenyRead keeps readable"
	case d.Rule == "filesystem (reads are open)":
		by = "the policy, which leaves reads open (filesystem.defaultDenyRead is off)"
	}
	return fmt.Sprintf("%s %s is already %s here by %s", g.access, g.path, verdict, by)
}

func (c editedChain) holdsDomain(g grant) string {
	if strings.Contains(g.value, "*") {
		return ""
	}
	nd := c.pol.DecideHost(g.value)
	if nd.Key != g.key {
		return ""
	}
	verdict := "denied"
	if nd.Allowed {
		verdict = "allowed"
	}
	return fmt.Sprintf("domain %s is already %s by %s", nd.Host, verdict, c.rule(nd.Key, nd.Pattern))
}

// rule names the entry value of key and where the chain holds it.
func (c editedChain) rule(key, value string) string {
	s := fmt.Sprintf("%s %q", key, value)
	if o, ok := c.res.Origin(key, value); ok {
		s += " (" + o.String() + ")"
	}
	return s
}
