package policy

import (
	"bytes"
	"encoding/json"
)

// Entry is one rule of the effective policy with where it comes from:
// Rule is its kind (filesystem.denyWrite, mandatory.shellStartup,
// filesystem.defaultDenyRead, …) and Source the file, template, command
// line or fence default that holds it.
type Entry struct {
	Value  string `json:"value"`
	Rule   string `json:"rule"`
	Source string `json:"source,omitempty"`
	plain  bool   // marshal Value alone
}

// Effective is the policy as the sandbox enforces it, not only as the
// config declares it: fence's system paths, private /tmp, protections
// and default command denies are in it, and every path is absolute.
type Effective struct {
	Filesystem struct {
		ReadMode     ReadMode `json:"readMode"`
		AllowRead    []Entry  `json:"allowRead"`
		AllowExecute []Entry  `json:"allowExecute"`
		AllowWrite   []Entry  `json:"allowWrite"`
		DenyRead     []Entry  `json:"denyRead"`
		DenyWrite    []Entry  `json:"denyWrite"`
	} `json:"filesystem"`
	Network struct {
		HostNetwork      bool    `json:"hostNetwork"`
		AllowedDomains   []Entry `json:"allowedDomains"`
		DeniedDomains    []Entry `json:"deniedDomains"`
		AllowUnixSockets []Entry `json:"allowUnixSockets"`
		AllUnixSockets   bool    `json:"allowAllUnixSockets"`
		LocalBinding     bool    `json:"allowLocalBinding"`
		// NamespaceBinding: servers may listen inside the sandbox's
		// private network namespace (allowLocalBinding unset or true).
		NamespaceBinding   bool    `json:"localBindingInNamespace"`
		LocalOutboundPorts []int   `json:"allowLocalOutboundPorts"`
		PrivateAddresses   []Entry `json:"allowPrivateAddresses"`
		RefusalSummary     bool    `json:"refusalSummary"`
		// UpstreamProxy is where hosts no domain rule names go
		// (network.defaultAction "proxy"), without credentials.
		UpstreamProxy *Entry `json:"upstreamProxy,omitempty"`
	} `json:"network"`
	Command struct {
		Deny    []Entry `json:"deny"`
		Allow   []Entry `json:"allow"`
		Dynamic string  `json:"dynamic"`
	} `json:"command"`
	Env struct {
		Deny  []Entry `json:"deny"`
		Allow []Entry `json:"allow"`
	} `json:"env"`
}

// Effective lists what p enforces, each entry with its source.
func (p *Policy) Effective() *Effective {
	e := &Effective{}
	fs := &e.Filesystem
	fs.ReadMode = p.ReadMode
	fs.AllowRead = ruleEntries(p.Read)
	fs.AllowExecute = ruleEntries(p.Execute)
	fs.AllowWrite = append(ruleEntries(p.Write), Entry{Value: "/tmp", Rule: "sandbox.privateTmp", Source: "fence (the sandbox's own /tmp, empty at start)"})
	fs.DenyRead = ruleEntries(p.DenyRead)
	fs.DenyWrite = ruleEntries(p.DenyWrite)
	n := &e.Network
	n.HostNetwork = p.HostNetwork
	n.AllowedDomains = p.domainEntries(p.AllowedDomains, "network.allowedDomains")
	n.DeniedDomains = p.domainEntries(p.DeniedDomains, "network.deniedDomains")
	n.AllowUnixSockets = ruleEntries(p.UnixSockets)
	n.AllUnixSockets, n.LocalBinding, n.LocalOutboundPorts = p.AllUnixSockets, p.LocalBinding, p.LocalOutboundPorts
	n.NamespaceBinding = p.NamespaceBinding && !p.HostNetwork
	n.PrivateAddresses = p.privateEntries()
	n.RefusalSummary = p.RefusalSummary
	if p.Upstream != nil {
		n.UpstreamProxy = &Entry{Value: p.Upstream.URL(), Rule: "network.defaultAction", Source: p.domainOrigins["network.defaultAction\x00"+DefaultActionProxy]}
	}
	e.Command.Deny = commandEntries(p.CommandDeny, "command.deny")
	e.Command.Allow = commandEntries(p.CommandAllow, "command.allow")
	e.Command.Dynamic = p.CommandDynamic
	e.Env.Deny, e.Env.Allow = p.envEntries()
	return e
}

func ruleEntries(rules []Rule) []Entry {
	out := []Entry{}
	for _, r := range rules {
		src := r.Source
		if src == "" && r.Text == "" {
			src = "fence (default)"
		}
		out = append(out, Entry{Value: r.Pattern, Rule: r.Key, Source: src})
	}
	return out
}

func (p *Policy) domainEntries(domains []string, key string) []Entry {
	out := []Entry{}
	for _, d := range domains {
		out = append(out, Entry{Value: d, Rule: key, Source: p.domainOrigins[key+"\x00"+d]})
	}
	return out
}

func (p *Policy) privateEntries() []Entry {
	const key = "network.allowPrivateAddresses"
	out := []Entry{}
	for _, pr := range p.AllowPrivateAddresses {
		out = append(out, Entry{Value: pr.String(), Rule: key, Source: p.domainOrigins[key+"\x00"+pr.String()]})
	}
	return out
}

func commandEntries(rules []CommandRule, key string) []Entry {
	out := []Entry{}
	for _, r := range rules {
		e := Entry{Value: r.Text, Rule: key, Source: r.Origin}
		if r.Builtin {
			e.Rule = "command.useDefaults"
		}
		out = append(out, e)
	}
	return out
}

// JSON renders the effective policy, indented. With origins each entry is
// an object naming its rule and source; without, its value alone.
func (e *Effective) JSON(origins bool) []byte {
	out := *e
	if !origins {
		for _, list := range []*[]Entry{
			&out.Filesystem.AllowRead, &out.Filesystem.AllowExecute, &out.Filesystem.AllowWrite,
			&out.Filesystem.DenyRead, &out.Filesystem.DenyWrite, &out.Network.AllowedDomains,
			&out.Network.DeniedDomains, &out.Network.AllowUnixSockets, &out.Network.PrivateAddresses, &out.Command.Deny, &out.Command.Allow,
			&out.Env.Deny, &out.Env.Allow,
		} {
			plain := make([]Entry, len(*list))
			for i, x := range *list {
				x.plain = true
				plain[i] = x
			}
			*list = plain
		}
		if u := out.Network.UpstreamProxy; u != nil {
			plain := *u
			plain.plain = true
			out.Network.UpstreamProxy = &plain
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic("policy: BUG: effective policy does not encode: " + err.Error())
	}
	return b.Bytes()
}

// MarshalJSON writes the entry as an object, or as its value alone when
// it is to be shown without origins.
func (x Entry) MarshalJSON() ([]byte, error) {
	if x.plain {
		return json.Marshal(x.Value)
	}
	type entry Entry
	return json.Marshal(entry(x))
}
