package darwin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// ProfileOptions are what the profile needs beyond the policy: where the
// proxies listen on the host's loopback, and the private TMPDIR.
type ProfileOptions struct {
	HTTPPort, SOCKSPort int
	TmpDir              string
}

// Mach services common tools need: logging, notifications, name and user
// lookups, certificate trust, FSEvents.
var baseMachLookups = []string{
	"com.apple.system.logger", "com.apple.system.notification_center", "com.apple.logd",
	"com.apple.SystemConfiguration.configd", "com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership", "com.apple.trustd", "com.apple.trustd.agent",
	"com.apple.FSEvents", "com.apple.coreservices.launchservicesd", "com.apple.diagnosticd",
	"com.apple.securityd.xpc", "com.apple.ocspd",
}

// macOS's own system paths, readable under defaultDenyRead (not
// strictDenyRead) besides the ones the policy lists: the dynamic loader
// and the frameworks live here.
var systemReadPaths = []string{"/System", "/Library", "/Applications", "/private/var/db/dyld", "/private/var/db/timezone", "/private/var/select", "/opt/homebrew"}

// sysctl names and prefixes that runtimes read (CPU count, OS version).
var sysctlPrefixes = []string{"hw.", "kern.", "machdep.cpu.", "vm."}

// Profile compiles the policy into an SBPL profile. Rules are written
// allows first and denies after them, so that a deny always wins; every
// deny carries the rule that caused it as its message.
func Profile(p *policy.Policy, o ProfileOptions) string {
	w := &writer{}
	w.line(`(version 1)`)
	w.line(`(deny default (with message "fence:default"))`)
	w.process()
	w.mach(p)
	w.devices(p.AllowPty)
	w.reads(p)
	w.writes(p, o.TmpDir)
	w.network(p, o)
	w.denies(p)
	return w.String()
}

type writer struct{ strings.Builder }

func (w *writer) line(format string, args ...any) {
	fmt.Fprintf(w, format+"\n", args...)
}

func (w *writer) comment(s string) { w.line("\n; %s", s) }

func (w *writer) process() {
	w.comment("processes: run, fork, and signal or inspect only inside the sandbox")
	w.line(`(allow process-exec process-fork)`)
	w.line(`(allow signal (target same-sandbox))`)
	w.line(`(allow process-info* (target same-sandbox))`)
	w.line(`(allow sysctl-read %s)`, joinFilters(mapList(sysctlPrefixes, func(s string) string { return "(sysctl-name-prefix " + sbplString(s) + ")" })))
}

func (w *writer) mach(p *policy.Policy) {
	w.comment("mach services")
	lookups := append(slices.Clone(baseMachLookups), p.MachLookup...)
	w.line(`(allow mach-lookup %s)`, machFilters(lookups))
	if len(p.MachRegister) > 0 {
		w.line(`(allow mach-register %s)`, machFilters(p.MachRegister))
	}
}

// machFilters turns service names (exact, "prefix*" or "*") into filters.
func machFilters(names []string) string {
	var out []string
	for _, n := range names {
		switch {
		case n == "*":
			return "" // every service: the operation with no filter
		case strings.HasSuffix(n, "*"):
			out = append(out, "(global-name-prefix "+sbplString(strings.TrimSuffix(n, "*"))+")")
		default:
			out = append(out, "(global-name "+sbplString(n)+")")
		}
	}
	return joinFilters(out)
}

func (w *writer) devices(pty bool) {
	w.comment("/dev essentials")
	w.line(`(allow file-read* file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper"))`)
	w.line(`(allow file-read* (literal "/dev/random") (literal "/dev/urandom") (literal "/dev/fd") (regex #"^/dev/fd/"))`)
	if pty {
		w.line(`(allow pseudo-tty)`)
		w.line(`(allow file-read* file-write* file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))`)
	}
}

func (w *writer) reads(p *policy.Policy) {
	w.comment("reads")
	w.line(`(allow file-read-metadata)`)
	switch p.ReadMode {
	case policy.ReadOpen:
		w.line(`(allow file-read*)`)
	case policy.ReadDefaultDeny:
		read := append(slices.Clone(p.Read), p.Write...)
		for _, s := range systemReadPaths {
			read = append(read, policy.Rule{Pattern: s, Origin: "default-deny system path"})
		}
		w.rules(`(allow file-read* %s)`, read)
	default:
		w.rules(`(allow file-read* %s)`, append(slices.Clone(p.Read), p.Write...))
	}
	if len(p.Execute) > 0 {
		w.rules(`(allow file-read-data process-exec %s)`, p.Execute)
	}
}

func (w *writer) writes(p *policy.Policy, tmpDir string) {
	w.comment("writes")
	if tmpDir != "" {
		w.line(`(allow file-read* file-write* (subpath %s))`, sbplString(darwinPath(tmpDir)))
	}
	w.rules(`(allow file-write* %s)`, p.Write)
}

func (w *writer) network(p *policy.Policy, o ProfileOptions) {
	w.comment("network: the proxies on the host's loopback, and what the policy opens")
	if p.HostNetwork {
		w.line(`(allow network*)`)
		return
	}
	w.line(`(allow network-outbound (remote tcp "localhost:%d") (remote tcp "localhost:%d"))`, o.HTTPPort, o.SOCKSPort)
	if p.LocalBinding {
		w.line(`(allow network-bind network-inbound (local ip "localhost:*"))`)
		w.line(`(allow network-outbound (remote ip "localhost:*"))`)
	}
	for _, port := range p.LocalOutboundPorts {
		w.line(`(allow network-outbound (remote tcp "localhost:%d"))`, port)
	}
	switch {
	case p.AllUnixSockets:
		w.line(`(allow network-outbound (remote unix-socket))`)
	case len(p.UnixSockets) > 0:
		var filters []string
		for _, r := range p.UnixSockets {
			filters = append(filters, "(path-regex "+sbplRegex(globRegex(darwinPath(r.Pattern), false))+")")
		}
		w.line(`(allow network-outbound (remote unix-socket %s))`, joinFilters(filters))
	}
}

// denies come last, so that they beat every allow above.
func (w *writer) denies(p *policy.Policy) {
	w.comment("denies, each naming its rule")
	for _, r := range p.DenyRead {
		w.line(`(deny file-read* file-write* %s (with message %s))`, filter(r), sbplString("fence:"+ruleName(r)))
	}
	for _, r := range p.DenyWrite {
		w.line(`(deny file-write* %s (with message %s))`, filter(r), sbplString("fence:"+ruleName(r)))
	}
	if ancestors := protectedAncestors(p); len(ancestors) > 0 {
		var filters []string
		for _, a := range ancestors {
			filters = append(filters, "(literal "+sbplString(a)+")")
		}
		w.line(`(deny file-write-unlink %s (with message "fence:always-protected"))`, joinFilters(filters))
	}
}

// rules writes one statement with a filter per rule.
func (w *writer) rules(format string, rules []policy.Rule) {
	if len(rules) == 0 {
		return
	}
	var filters []string
	for _, r := range rules {
		if f := filter(r); !slices.Contains(filters, f) {
			filters = append(filters, f)
		}
	}
	w.line(format, joinFilters(filters))
}

// filter is the SBPL filter for a rule: a subpath for a plain path, an
// anchored regex for a glob or a rule that ignores case.
func filter(r policy.Rule) string {
	p := darwinPath(r.Pattern)
	if r.Glob || r.Fold {
		return "(regex " + sbplRegex(globRegex(p, r.Fold)) + ")"
	}
	return "(subpath " + sbplString(p) + ")"
}

// ruleName is the rule as messages name it: the config key, or
// "always-protected" for the protections no config can lift.
func ruleName(r policy.Rule) string {
	if strings.HasPrefix(r.Origin, "always protected") {
		return "always-protected"
	}
	key, _, _ := strings.Cut(r.Origin, " ")
	return key
}

// protectedAncestors are the directories above each plain protected path,
// up to but not including the root, which must not be renamed away.
func protectedAncestors(p *policy.Policy) []string {
	var out []string
	for _, r := range p.DenyWrite {
		if r.Glob || !strings.HasPrefix(r.Origin, "always protected") {
			continue
		}
		for dir := parent(darwinPath(r.Pattern)); dir != "/" && dir != "."; dir = parent(dir) {
			if !slices.Contains(out, dir) {
				out = append(out, dir)
			}
		}
	}
	slices.Sort(out)
	return out
}

func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// darwinPath is where a path really is on macOS, whose /tmp, /var and
// /etc are links into /private.
func darwinPath(p string) string {
	for _, d := range []string{"/tmp", "/var", "/etc"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "/private" + p
		}
	}
	return p
}

// sbplString quotes s as an SBPL string literal: backslashes, quotes and
// control characters escaped, so no path can end the string early.
func sbplString(s string) string { return sbplQuote(`"`, s, true) }

// sbplRegex writes a regular expression as an SBPL regex literal. The
// expression's own escapes stay; quotes and control characters become
// regex escapes, so the literal cannot end early.
func sbplRegex(re string) string { return sbplQuote(`#"`, re, false) }

// sbplQuote writes s between open and a closing quote, escaping quotes
// and control characters, and backslashes when escapeBackslash is set.
func sbplQuote(open, s string, escapeBackslash bool) string {
	var b strings.Builder
	b.WriteString(open)
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' && escapeBackslash:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func joinFilters(filters []string) string { return strings.Join(filters, " ") }

func mapList(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
