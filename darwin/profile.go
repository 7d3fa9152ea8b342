package darwin

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/fence-sandbox/fence/policy"
)

// profileOf compiles the policy into an SBPL profile, looking at this
// machine's disk for links and binaries; a refusal gives a profile that
// denies everything.
func profileOf(p *policy.Policy, o ProfileOptions) string {
	profile, err := Build(InputFromPolicy(p, o, HostFinder{Path: os.Getenv("PATH")}))
	if err != nil {
		return refusedProfile(o, err)
	}
	return profile
}

// refusedProfile denies everything, with the refusal as its message.
func refusedProfile(o ProfileOptions, err error) string {
	return "(version 1)\n(deny default (with message " + sbplString(o.tag()+":refused: "+err.Error()) + "))\n"
}

// Build compiles the input into an SBPL profile, or says which deny
// rule it cannot express exactly (its file:line:col first).
//
// The order is the one Seatbelt's precedence needs: every allow first,
// then the denies, each of which names every specific operation an allow
// above grants (file-read-data, file-read-metadata, process-exec, …) and
// not only the wildcard, so that no specific allow outlives a deny.
func Build(in Input) (string, error) {
	w := &writer{tag: in.tag(), allowed: map[string]bool{}}
	w.line(`(version 1)`)
	if n := len(in.SocketScanCut); n > 0 {
		// fence's own words and a count: no path reaches a comment,
		// where a newline in a name would end it and start a rule.
		w.line("; warning: fence could not list the unix sockets of %d writable tree(s) at start: they are closed to unix sockets (the denies below)", n)
	}
	w.line(`(deny default (with message %s))`, sbplString(w.tag+":default"))
	w.process()
	w.system(in)
	w.devices(in)
	w.reads(in)
	w.writes(in)
	w.network(in)
	if err := w.denies(in); err != nil {
		return "", err
	}
	return w.String(), w.err
}

func (o ProfileOptions) tag() string {
	if o.Tag == "" {
		return "fence"
	}
	return o.Tag
}

type writer struct {
	strings.Builder
	tag string
	// allowed are the operations an allow grants anywhere, which the
	// denies must name.
	allowed map[string]bool
	// socketTrees are where the allows let unix sockets be bound and
	// reached (a glob as its literal directory); everySocket is set when
	// every socket may be reached.
	socketTrees []string
	everySocket bool
	// writeTrees are the writable ones among them.
	writeTrees []string
	err        error
}

func (w *writer) line(format string, args ...any) {
	fmt.Fprintf(w, format+"\n", args...)
}

// note is a comment's text: fence's own fixed words, never a path or a
// value from the disk or the environment (a newline in one would end the
// comment and start a rule). A string constant converts to it; a string
// variable does not.
type note string

func (w *writer) comment(s note) { w.line("\n; %s", s) }

// allow writes an allow of ops with filters (none: the operations
// everywhere), and records the operations.
func (w *writer) allow(ops string, filters ...string) {
	for _, op := range strings.Fields(ops) {
		w.allowed[op] = true
	}
	if len(filters) == 0 {
		w.line("(allow %s)", ops)
		return
	}
	w.line("(allow %s %s)", ops, joinFilters(filters))
}

func (w *writer) process() {
	w.comment("processes: run, fork, and signal or inspect only inside the sandbox")
	w.allow("process-exec process-fork")
	w.allow("signal", "(target same-sandbox)")
	w.allow("process-info*", "(target same-sandbox)")
}

// system writes what every tool needs of the system: named sysctls, mach
// services, semaphores, preferences, shared memory, iokit, sockets.
func (w *writer) system(in Input) {
	w.comment("sysctls: named entries only")
	w.allow("sysctl-read", slices.Concat(
		mapList(sysctlNames, func(s string) string { return "(sysctl-name " + sbplString(s) + ")" }),
		mapList(sysctlPrefixes, func(s string) string { return "(sysctl-name-prefix " + sbplString(s) + ")" }))...)
	w.allow("sysctl-write", mapList(sysctlWrites, func(s string) string { return "(sysctl-name " + sbplString(s) + ")" })...)
	w.comment("mach services")
	w.allow("mach-lookup", machFilters(slices.Concat(baseMachLookups, in.MachLookup))...)
	if len(in.MachRegister) > 0 {
		w.allow("mach-register", machFilters(in.MachRegister)...)
	}
	w.comment("semaphores (Python multiprocessing), preferences, shared memory of preferences and notifications, power state")
	w.allow("ipc-posix-sem")
	w.allow("user-preference-read")
	w.allow("ipc-posix-shm-read*", slices.Concat(
		mapList(shmNamePrefixes, func(s string) string { return "(ipc-posix-name-prefix " + sbplString(s) + ")" }),
		mapList(shmNames, func(s string) string { return "(ipc-posix-name " + sbplString(s) + ")" }))...)
	w.allow("iokit-open", `(iokit-user-client-class "RootDomainUserClient")`)
	w.comment("unix and system sockets: creating one grants nothing; the network rules below say where it may lead")
	w.allow("system-socket", "(socket-domain AF_UNIX)")
	w.allow("system-socket", "(require-all (socket-domain AF_SYSTEM) (socket-protocol 2))")
}

// machFilters turns service names (exact, "prefix*" or "*") into filters;
// none means every service.
func machFilters(names []string) []string {
	var out []string
	for _, n := range names {
		switch {
		case n == "*":
			return nil
		case strings.HasSuffix(n, "*"):
			out = append(out, "(global-name-regex "+sbplRegex("^"+quoteLiteral(strings.TrimSuffix(n, "*"))+".*$")+")")
		default:
			out = append(out, "(global-name "+sbplString(n)+")")
		}
	}
	return out
}

// ttyName is the terminals' devices: Terminal.app's tabs, ssh's sessions
// and ptys.
const ttyName = `^/dev/ttys[0-9]+$`

func (w *writer) devices(in Input) {
	w.comment("/dev: the essentials, the command's own terminals (job control, isatty), the descriptors")
	w.allow("file-read* file-write-data file-ioctl", `(literal "/dev/null")`, `(literal "/dev/zero")`, `(literal "/dev/tty")`, `(literal "/dev/dtracehelper")`)
	w.allow("file-read*", `(literal "/dev/random")`, `(literal "/dev/urandom")`)
	if terms := in.terminalFilters(); len(terms) > 0 {
		w.allow("file-read* file-write-data file-ioctl", terms...)
	}
	w.allow("file-read* file-write-data", `(literal "/dev/stdin")`, `(literal "/dev/stdout")`, `(literal "/dev/stderr")`, `(literal "/dev/fd")`, `(regex #"^/dev/fd/[0-9]+$")`)
	if in.AllowPty {
		// The ptys the command opens are /dev/ttysN too, which Seatbelt
		// cannot tell from the user's other terminals: with allowPty,
		// every one may be opened.
		w.allow("pseudo-tty")
		w.allow("file-read* file-write* file-ioctl", `(literal "/dev/ptmx")`, "(regex "+sbplRegex(ttyName)+")")
	}
}

func (in Input) terminalFilters() []string {
	return mapList(in.Terminals, func(t string) string { return "(literal " + sbplString(t) + ")" })
}

// otherTerminals closes every terminal but the command's own (and
// /dev/tty), whatever the reads allow: another terminal's device gives
// the keystrokes typed there (a password at a sudo prompt in another
// tab) and lets the command type into it.
func (w *writer) otherTerminals(in Input) {
	if in.AllowPty {
		return
	}
	filter := "(regex " + sbplRegex(ttyName) + ")"
	if own := in.terminalFilters(); len(own) > 0 {
		filter = "(require-all " + filter + " " + strings.Join(mapList(own, func(f string) string { return "(require-not " + f + ")" }), " ") + ")"
	}
	ops := w.denyOps("file-read*", "file-write*")
	w.line("(deny %s %s (with message %s))", ops, filter, sbplString(w.tag+":terminals (a terminal other than the command's own)"))
}

func (w *writer) reads(in Input) {
	w.comment("reads")
	w.allow("file-read-metadata")
	switch in.ReadMode {
	case policy.ReadOpen:
		w.allow("file-read*")
	case policy.ReadDefaultDeny:
		rules := slices.Concat(in.Read, in.Write)
		for _, s := range systemReadPaths {
			rules = append(rules, PathRule{Pattern: s})
		}
		w.rules("file-read*", rules, `(literal "/")`)
	default:
		w.rules("file-read*", slices.Concat(in.Read, in.Write), `(literal "/")`)
	}
	w.rules("file-read-data process-exec", in.Execute)
	// The per-user temporary and cache directories (below
	// /private/var/folders) get only what the policy's rules give them:
	// they hold other programs' files, and caches that host tools trust
	// (clang's modules, xcrun's lookup database, which names the programs
	// xcrun runs). The command's own go to the private TMPDIR (see
	// privateEnv); xcrun, which no variable points elsewhere, cannot
	// write its cache and looks its tools up afresh.
}

func (w *writer) writes(in Input) {
	w.comment("writes, and unix sockets bound or reached below writable paths")
	var filters []string
	if in.TmpDir != "" {
		filters = append(filters, "(subpath "+sbplString(darwinPath(in.TmpDir))+")")
		w.allow("file-read* file-write*", filters...)
	}
	if in.TmpDir != "" {
		w.socketTrees = append(w.socketTrees, darwinPath(in.TmpDir))
	}
	for _, r := range in.Write {
		filters = appendNew(filters, w.filters(r, false)...)
		w.socketTrees = append(w.socketTrees, r.trees()...)
	}
	if len(in.Write) > 0 {
		w.rules("file-write*", in.Write)
	}
	w.writeTrees = slices.Clone(w.socketTrees)
	if len(filters) > 0 {
		w.allow("network-bind", "(local unix-socket "+joinFilters(filters)+")")
		w.allow("network-outbound", "(remote unix-socket "+joinFilters(filters)+")")
	}
}

func (w *writer) network(in Input) {
	w.comment("network: the proxies on the host's loopback, what the policy opens; unix sockets only as listed")
	if in.HostNetwork {
		w.allow("network-outbound", `(remote ip "*:*")`)
		if in.LocalBinding {
			w.allow("network-bind network-inbound", `(local ip "*:*")`)
		}
		w.allow("network-outbound", "(remote unix-socket (subpath "+sbplString(dnsSocket)+"))")
		w.socketTrees = append(w.socketTrees, dnsSocket)
	} else {
		w.localNetwork(in)
	}
	switch {
	case in.AllUnixSockets:
		w.allow("network-outbound", "(remote unix-socket)")
		w.everySocket = true
	case len(in.UnixSockets) > 0:
		var filters []string
		for _, r := range in.UnixSockets {
			filters = appendNew(filters, w.filters(r, false)...)
			w.socketTrees = append(w.socketTrees, r.trees()...)
		}
		w.allow("network-outbound", "(remote unix-socket "+joinFilters(filters)+")")
	}
}

// localNetwork is the filtered network's: the proxies, the host's
// loopback ports the policy relays, and with allowLocalBinding servers on
// loopback. Seatbelt cannot tell the command's own servers from the
// host's, so a client in the sandbox reaches its own server only at a
// port allowLocalOutboundPorts lists, as it would a host's.
func (w *writer) localNetwork(in Input) {
	w.allow("network-outbound", fmt.Sprintf(`(remote ip "localhost:%d")`, in.HTTPPort), fmt.Sprintf(`(remote ip "localhost:%d")`, in.SOCKSPort))
	if in.LocalBinding {
		w.allow("network-bind network-inbound", `(local ip "localhost:*")`)
	}
	for _, port := range in.LocalOutboundPorts {
		w.allow("network-outbound", fmt.Sprintf(`(remote ip "localhost:%d")`, port))
	}
}

// rules writes one allow of ops with a filter per rule, and extra ones.
func (w *writer) rules(ops string, rules []PathRule, extra ...string) {
	var filters []string
	for _, r := range rules {
		filters = appendNew(filters, w.filters(r, false)...)
	}
	if filters = append(filters, extra...); len(filters) > 0 {
		w.allow(ops, filters...)
	}
}

// filters are the SBPL filters for a rule: a subpath for a plain path, an
// anchored regex for a glob or a rule that ignores case; one per
// spelling. With exact, a pattern the regex dialect cannot match exactly
// is an error (kept in w.err); without, it matches less.
func (w *writer) filters(r PathRule, exact bool) []string {
	var out []string
	for _, p := range r.spellings() {
		if !r.Glob && !r.Fold {
			out = appendNew(out, "(subpath "+sbplString(p)+")")
			continue
		}
		mode := foldNone
		switch {
		case r.Fold && r.Glob:
			mode = foldLower
		case r.Fold:
			mode = foldEqual
		}
		re, err := globRegex(p, mode, exact)
		var u *Unexpressible
		if !exact && errors.As(err, &u) && u.Why == errBadGlob {
			continue // an allow that grants nothing, as on Linux
		}
		if err != nil && w.err == nil {
			w.err = r.refusal(err)
		}
		out = appendNew(out, "(regex "+sbplRegex(re)+")")
	}
	return out
}

// spellings are the rule's pattern on macOS ("/private" for /tmp, /var
// and /etc) and its resolved spellings.
//
// A spelling with letters outside ASCII comes in both Unicode forms, the
// composed (NFC) and the decomposed (NFD): macOS's file systems take
// either for the same file, and Seatbelt may see the one the caller
// typed. (A glob's classes are left as written: decomposing one would
// change what it matches.)
func (r PathRule) spellings() []string {
	var out []string
	for _, s := range append([]string{r.Pattern}, r.Resolved...) {
		s = darwinPath(s)
		out = appendNew(out, s)
		if !isASCIIString(s) && !(r.Glob && strings.Contains(s, "[")) {
			out = appendNew(out, norm.NFC.String(s), norm.NFD.String(s))
		}
	}
	return out
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// refusal names the rule, where it was written, and why.
func (r PathRule) refusal(err error) error {
	at := r.Source
	if at == "" {
		at = "fence"
	}
	return fmt.Errorf("%s: %s %q: %w; refusing to run rather than enforce less (write the pattern without it, or list the names)", at, r.Name, r.written(), err)
}

func (r PathRule) written() string {
	if r.Text != "" {
		return r.Text
	}
	return r.Pattern
}

// message is a deny's message: the tag, the rule and its pattern.
func (w *writer) message(r PathRule, what string) string {
	return "(with message " + sbplString(w.tag+":"+r.Name+" "+r.written()+what) + ")"
}

// denies come last, so that they beat every allow above: each names the
// wildcard and every specific operation allowed above.
func (w *writer) denies(in Input) error {
	w.comment("denies, each naming its rule, every specific operation allowed above, and the directories above it")
	readOps := w.denyOps("file-read*", "file-read-data", "file-read-metadata", "file-write*", "process-exec")
	writeOps := w.denyOps("file-write*")
	for _, r := range in.DenyRead {
		w.deny(readOps, r, true)
	}
	for _, r := range in.DenyWrite {
		w.deny(writeOps, r, false)
	}
	if w.err != nil {
		return w.err
	}
	w.ancestors(slices.Concat(in.DenyRead, in.DenyWrite))
	w.hostSocketDenies(in)
	w.otherTerminals(in)
	for _, e := range in.ExecDenies {
		var filters []string
		for _, b := range e.Binaries {
			filters = appendNew(filters, denyPath(b)...)
		}
		// Reading the file is denied too, as the Linux mask does: a copy
		// of it would run under another name.
		w.line("(deny process-exec file-read-data %s (with message %s))", joinFilters(filters), sbplString(w.tag+":command.deny "+e.Rule))
	}
	return nil
}

// denyOps are the operations given and every specific operation of the
// wildcards' families that an allow above grants.
func (w *writer) denyOps(wildcards ...string) string {
	ops := slices.Clone(wildcards)
	for op := range w.allowed {
		for _, wc := range wildcards {
			if family, ok := strings.CutSuffix(wc, "*"); ok && op != wc && strings.HasPrefix(op, family) {
				ops = appendNew(ops, op)
			}
		}
	}
	if w.allowed["file-ioctl"] && slices.Contains(wildcards, "file-read*") {
		ops = appendNew(ops, "file-ioctl")
	}
	slices.Sort(ops[len(wildcards):])
	return strings.Join(ops, " ")
}

// deny writes a rule's denies: the file operations, and where an allow
// reaches unix sockets, binding one there (which creates a file) and, for
// a read deny, connecting to one.
func (w *writer) deny(ops string, r PathRule, connect bool) {
	filters := joinFilters(append(w.filters(r, true), r.matchFilters()...))
	w.line("(deny %s %s %s)", ops, filters, w.message(r, ""))
	if !w.socketsMeet(r) {
		return
	}
	w.line("(deny network-bind (local unix-socket %s) %s)", filters, w.message(r, ""))
	if connect {
		w.line("(deny network-outbound (remote unix-socket %s) %s)", filters, w.message(r, ""))
	}
}

// matchFilters are the filters of the rule's matches at start: each path
// and what is below it, its case folded as the rule's is.
func (r PathRule) matchFilters() []string {
	var out []string
	for _, m := range r.Matches {
		if r.Fold {
			out = appendNew(out, "(regex "+sbplRegex(literalRegex(m, foldEqual, true))+")")
		} else {
			out = appendNew(out, "(subpath "+sbplString(m)+")")
		}
	}
	return out
}

// socketsMeet reports whether an allow of unix sockets may reach what r
// names: every socket, or a tree above, below or at one of its spellings.
func (w *writer) socketsMeet(r PathRule) bool {
	if w.everySocket {
		return true
	}
	for _, t := range r.trees() {
		for _, s := range w.socketTrees {
			if under(t, s) || under(s, t) {
				return true
			}
		}
	}
	return false
}

// trees are the directories a rule's spellings lie in: the paths
// themselves, or a glob's literal directory.
func (r PathRule) trees() []string {
	var out []string
	for _, s := range r.spellings() {
		if r.Glob {
			s = literalDir(s)
		}
		out = append(out, s)
	}
	return out
}

// under reports whether p is dir or lies below it, case aside (macOS's
// file systems mostly ignore it).
func under(p, dir string) bool {
	p, dir = strings.ToLower(p), strings.ToLower(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// ancestors denies renaming or removing a directory above a deny rule's
// path (a glob's literal directory included), each spelling's: moved
// away, the path would leave the rule.
func (w *writer) ancestors(rules []PathRule) {
	seen := map[string]bool{}
	for _, r := range rules {
		var filters []string
		for _, start := range r.ancestorStarts() {
			for dir := start; dir != "/" && dir != "."; dir = parent(dir) {
				if f := r.exactFilter(dir); !seen[f] {
					seen[f] = true
					filters = append(filters, f)
				}
			}
		}
		if len(filters) > 0 {
			w.line("(deny file-write-unlink %s %s)", joinFilters(filters), w.message(r, " (a directory above it)"))
		}
	}
}

// ancestorStarts are the first directories whose rename would move what
// r denies: above each spelling (a glob's literal directory) and above
// each match at start.
func (r PathRule) ancestorStarts() []string {
	var out []string
	for _, s := range r.spellings() {
		if r.Glob {
			out = append(out, literalDir(s))
		} else {
			out = append(out, parent(s))
		}
	}
	for _, m := range r.Matches {
		out = append(out, parent(m))
	}
	return out
}

// denyPath are the filters of a path fence denies alone (a command's
// binary): each spelling, its case folded, as every deny rule's.
func denyPath(p string) []string {
	r := PathRule{Pattern: p, Fold: true}
	return mapList(r.spellings(), r.exactFilter)
}

// exactFilter matches the path p alone, its case folded as the rule's.
func (r PathRule) exactFilter(p string) string {
	if r.Fold {
		return "(regex " + sbplRegex(literalRegex(p, foldEqual, false)) + ")"
	}
	return "(literal " + sbplString(p) + ")"
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

// quoteLiteral escapes s for a regex outside brackets.
func quoteLiteral(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
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

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

func mapList(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
