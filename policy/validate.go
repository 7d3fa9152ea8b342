package policy

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"
)

// validate checks the meaning of every value whose type was already checked
// by the decoder, and points at the first problem.
func (p *parsed) validate() error {
	c := &p.cfg
	checks := []struct {
		key   string
		list  []string
		check func(string) string
	}{
		{"filesystem.allowRead", c.Filesystem.AllowRead, checkPathPattern},
		{"filesystem.allowExecute", c.Filesystem.AllowExecute, checkPathPattern},
		{"filesystem.denyRead", c.Filesystem.DenyRead, checkPathPattern},
		{"filesystem.allowWrite", c.Filesystem.AllowWrite, checkPathPattern},
		{"filesystem.denyWrite", c.Filesystem.DenyWrite, checkPathPattern},
		{"network.allowedDomains", c.Network.AllowedDomains, checkDomain},
		{"network.deniedDomains", c.Network.DeniedDomains, checkDomain},
		{"network.allowUnixSockets", c.Network.AllowUnixSockets, checkSocketPath},
		{"network.allowPrivateAddresses", c.Network.AllowPrivateAddresses, checkPrivateRange},
		{"devices.allow", c.Devices.Allow, checkDevicePath},
		{"command.deny", c.Command.Deny, checkCommandRule},
		{"command.allow", c.Command.Allow, checkCommandRule},
		{"command.acceptSharedBinaryCannotRuntimeDeny", c.Command.AcceptSharedBinaryCannotRuntimeDeny, checkCommandRule},
		{"ssh.allowedHosts", c.SSH.AllowedHosts, checkHostPattern},
		{"ssh.deniedHosts", c.SSH.DeniedHosts, checkHostPattern},
		{"ssh.allowedCommands", c.SSH.AllowedCommands, checkCommandRule},
		{"ssh.deniedCommands", c.SSH.DeniedCommands, checkCommandRule},
		{"macos.mach.lookup", c.MacOS.Mach.Lookup, checkMachName},
		{"macos.mach.register", c.MacOS.Mach.Register, checkMachName},
		{"env.deny", c.Env.Deny, checkEnvPattern},
		{"env.allow", c.Env.Allow, checkEnvPattern},
	}
	for _, ch := range checks {
		for i, v := range ch.list {
			if problem := ch.check(v); problem != "" {
				return p.errorf(fmt.Sprintf("%s[%d]", ch.key, i), "%q %s", v, problem)
			}
		}
	}
	return p.validateScalars()
}

func (p *parsed) validateScalars() error {
	c := &p.cfg
	if _, set := p.pos["extends"]; set && strings.TrimSpace(c.Extends) == "" {
		return p.errorf("extends", "is empty: name a template, \"@base\", or a file path")
	}
	if c.Devices.Mode != "" && !slices.Contains(DeviceModes, c.Devices.Mode) {
		return p.errorf("devices.mode", "%q is not a device mode: want one of %s", c.Devices.Mode, strings.Join(DeviceModes, ", "))
	}
	if c.Command.Dynamic != "" && !slices.Contains(DynamicModes, c.Command.Dynamic) {
		return p.errorf("command.dynamic", "%q is not a mode: want allow or deny", c.Command.Dynamic)
	}
	if c.Command.RuntimeExecPolicy != "" && !slices.Contains(RuntimeExecModes, c.Command.RuntimeExecPolicy) {
		return p.errorf("command.runtimeExecPolicy", "%q is not a mode: want path or argv", c.Command.RuntimeExecPolicy)
	}
	if _, set := p.pos["filesystem.globBudgetMs"]; set && (c.Filesystem.GlobBudgetMs < 1 || c.Filesystem.GlobBudgetMs > MaxGlobBudgetMs) {
		return p.errorf("filesystem.globBudgetMs", "%d is out of range: want 1 to %d milliseconds", c.Filesystem.GlobBudgetMs, MaxGlobBudgetMs)
	}
	if key, problem := checkLimits(c.Limits); problem != "" {
		return p.errorf(key, "%s", problem)
	}
	if _, set := p.pos["audit.file"]; set {
		if problem := checkAuditFile(c.Audit.File); problem != "" {
			return p.errorf("audit.file", "%q %s", c.Audit.File, problem)
		}
	}
	if key, problem := p.checkUpstreamKeys(); problem != "" {
		return p.errorf(key, "%s", problem)
	}
	ports := map[string]int{"network.httpProxyPort": c.Network.HTTPProxyPort, "network.socksProxyPort": c.Network.SocksProxyPort}
	for i, port := range c.Network.AllowLocalOutboundPorts {
		ports[fmt.Sprintf("network.allowLocalOutboundPorts[%d]", i)] = port
	}
	for _, key := range sortedKeys(ports) {
		if _, set := p.pos[key]; set && (ports[key] < 1 || ports[key] > 65535) {
			return p.errorf(key, "port %d is out of range: want 1 to 65535", ports[key])
		}
	}
	return nil
}

func checkAuditFile(f string) string {
	switch {
	case strings.TrimSpace(f) == "":
		return "is empty: name a file, such as \"~/.local/state/fence/audit.jsonl\""
	case hasGlob(f):
		return "is a glob: name one file"
	case strings.HasSuffix(f, "/"):
		return "names a directory: name a file in it"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkPathPattern accepts absolute paths, "~" and "~/..." paths, paths
// relative to the working directory, and doublestar globs over any of them.
func checkPathPattern(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is an empty pattern: remove it, or use \".\" for the working directory"
	case strings.ContainsRune(p, 0):
		return "contains a NUL byte"
	case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
		return "uses ~user, which is not supported: write the absolute path"
	case !doublestar.ValidatePattern(p):
		return "is not a valid glob: check its brackets and escapes"
	case backwardRange(p) || backwardRange(strings.ToLower(p)):
		// Deny rules match in lower case, so [A-_] would turn into [a-_].
		return "has a character range that runs backwards (such as [z-a]), or does once lowered for a deny rule's case-blind match"
	}
	return ""
}

// CheckPathPattern says what is wrong with a path pattern, or "" when
// nothing is: what the loader refuses in filesystem rules.
func CheckPathPattern(p string) string { return checkPathPattern(p) }

// backwardRange reports whether a character class in p holds a range whose
// end comes before its start.
func backwardRange(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			end := ClassEnd(p[i+1:])
			if end < 0 {
				return false
			}
			class := strings.TrimLeft(p[i+1:i+1+end], "!^")
			for _, r := range ClassRanges(class) {
				if r[1] < r[0] {
					return true
				}
			}
			i += end + 1
		}
	}
	return false
}

// ClassEnd is the index in s (what follows a glob's '[') of the ']' that
// closes the class, skipping escaped characters, or -1.
func ClassEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ']':
			return i
		}
	}
	return -1
}

// ClassRanges reads the inside of a glob character class (without its
// brackets and negation) into ranges of runes, a single character being a
// range of one: a backslash escapes the next character, and a '-' at
// either end, or escaped, is itself.
func ClassRanges(class string) [][2]rune {
	var runes []rune
	var escaped []bool
	rs := []rune(class)
	for i := 0; i < len(rs); i++ {
		esc := rs[i] == '\\' && i+1 < len(rs)
		if esc {
			i++
		}
		runes, escaped = append(runes, rs[i]), append(escaped, esc)
	}
	var out [][2]rune
	for i := 0; i < len(runes); i++ {
		if i+2 < len(runes) && runes[i+1] == '-' && !escaped[i+1] {
			out = append(out, [2]rune{runes[i], runes[i+2]})
			i += 2
			continue
		}
		out = append(out, [2]rune{runes[i], runes[i]})
	}
	return out
}

func checkSocketPath(p string) string {
	if problem := checkPathPattern(p); problem != "" {
		return problem
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") {
		return "is not an absolute socket path: want \"/run/...\" or \"~/...\""
	}
	return ""
}

func checkDevicePath(p string) string {
	if problem := checkPathPattern(p); problem != "" {
		return problem
	}
	if !strings.HasPrefix(p, "/dev/") || path.Clean(p) != p {
		return "is not a device path: want a clean path under /dev/, such as \"/dev/kvm\""
	}
	return ""
}

func checkCommandRule(r string) string {
	if strings.TrimSpace(r) == "" {
		return "is an empty rule: remove it"
	}
	// A word that is not a valid glob would never match anything: the
	// rule would deny nothing without a word said.
	for _, tok := range strings.Fields(r) {
		if _, err := path.Match(tok, ""); err != nil {
			return fmt.Sprintf("has %q, which is not a valid glob and would match nothing: check its brackets (a '-' first in one needs a backslash before it)", tok)
		}
	}
	return ""
}

func checkEnvPattern(p string) string {
	if p == "" || strings.ContainsAny(p, "= \t\n") {
		return "is not a variable name pattern: want a name or a glob such as \"*_TOKEN\""
	}
	if _, err := path.Match(p, ""); err != nil {
		return "is not a valid glob: check its brackets"
	}
	return ""
}

func checkHostPattern(h string) string {
	switch {
	case strings.TrimSpace(h) == "":
		return "is an empty host pattern: remove it"
	case strings.ContainsFunc(h, unicode.IsSpace):
		return "contains white space: write one host pattern per entry"
	}
	return ""
}

func checkMachName(n string) string {
	switch {
	case strings.TrimSpace(n) == "":
		return "is an empty service name: remove it"
	case strings.Contains(strings.TrimSuffix(n, "*"), "*"):
		return "has a \"*\" before its end: want an exact name, a prefix ending in \"*\", or \"*\""
	}
	return ""
}

// checkDomain accepts "*", IP literals, host names, and "*.example.com".
// It rejects what looks like a URL, and wildcards that cover a whole
// top-level domain.
func checkDomain(d string) string {
	if d == "*" {
		return ""
	}
	if problem := domainShape(d); problem != "" {
		return problem + " (want a host name such as \"example.com\", \"*.example.com\", an IP address, or \"*\")"
	}
	return ""
}

func domainShape(d string) string {
	switch {
	case strings.TrimSpace(d) == "":
		return "is an empty domain pattern"
	case strings.Contains(d, "://"):
		return "has a scheme: write only the host name"
	case strings.HasPrefix(d, "["):
		return "is a bracketed address: write IPv6 addresses without brackets and without a port"
	}
	if addr, err := netip.ParseAddr(d); err == nil {
		if addr.Zone() != "" {
			return "has an IPv6 zone, which is not supported"
		}
		return ""
	}
	switch {
	case strings.ContainsAny(d, "/?#"):
		return "has a path: domain rules cover the whole host"
	case strings.Contains(d, "@"):
		return "has a user name: write only the host name"
	case strings.Contains(d, ":"):
		return "has a port: domain rules cover every port"
	}
	host, wild := strings.CutPrefix(d, "*.")
	if strings.Contains(host, "*") {
		return "has a \"*\" that is not a leading \"*.\""
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if wild && len(labels) < 2 {
		return "would match a whole top-level domain: name the domain, as in \"*.example.com\""
	}
	for _, l := range labels {
		if problem := checkLabel(l); problem != "" {
			return problem
		}
	}
	return ""
}

func checkLabel(l string) string {
	switch {
	case l == "":
		return "has an empty label (two dots in a row, or a leading dot)"
	case len(l) > 63:
		return "has a label longer than 63 bytes"
	case strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-"):
		return "has a label that starts or ends with \"-\""
	}
	for _, r := range l {
		if r != '-' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
			return fmt.Sprintf("has the character %q, which cannot appear in a host name", r)
		}
	}
	return ""
}
