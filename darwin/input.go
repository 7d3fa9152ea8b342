package darwin

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// Input is everything the profile compiler reads, as plain data: the
// policy's rules with their kinds, what was found on the disk for them
// (resolved spellings, the binaries of command rules) and the run's own
// values (ports, directories, the terminal).
type Input struct {
	ReadMode  policy.ReadMode
	Read      []PathRule
	Execute   []PathRule
	Write     []PathRule
	DenyRead  []PathRule
	DenyWrite []PathRule
	// UnixSockets are the sockets the command may connect to besides the
	// ones below writable paths; AllUnixSockets allows every one.
	UnixSockets    []PathRule
	AllUnixSockets bool
	// HostNetwork opens IP networking (allowedDomains "*"); LocalBinding
	// lets servers listen on loopback; LocalOutboundPorts are the host's
	// loopback ports the command may reach.
	HostNetwork        bool
	LocalBinding       bool
	LocalOutboundPorts []int
	MachLookup         []string
	MachRegister       []string
	AllowPty           bool
	// ExecDenies are the one-word command rules and their binaries.
	ExecDenies []ExecDeny
	// RuntimeExec is command.runtimeExecPolicy: "path" or "argv".
	RuntimeExec string
	// Home is the user's home and HomeResolved its links resolved (when
	// that differs); SSHAuthSock the ssh agent's socket, as fence's own
	// environment says it, and resolved: host sockets kept closed below
	// writable paths (see hostSocketPlaces).
	Home, HomeResolved, SSHAuthSock, SSHAuthSockResolved string
	// HostSockets are the unix sockets that existed at start below
	// writable paths; SocketScanCut the writable trees fence could not
	// list them in, closed to unix sockets but for the private TMPDIR's
	// and the listed ones (see socketscan.go).
	HostSockets, SocketScanCut []string
	ProfileOptions
}

// ProfileOptions are the run's own values: where the proxies listen on
// the host's loopback, the private TMPDIR, the terminal the command
// inherits, and the tag every message of the profile starts with.
type ProfileOptions struct {
	HTTPPort, SOCKSPort int
	TmpDir              string
	// SSHAuthSock is $SSH_AUTH_SOCK as fence was started with: the
	// agent's socket stays closed even when env rules keep the variable
	// from the command.
	SSHAuthSock string
	// Terminals are the devices of the terminals the command inherits:
	// with /dev/tty, the only terminals it may open (another one, a
	// Terminal tab's /dev/ttysN, would give it that tab's keystrokes).
	Terminals []string
	// Tag starts every message ("fence" when empty), so that a run's
	// denials can be told from another run's in the log.
	Tag string
}

// PathRule is a filesystem rule as the profile needs it.
type PathRule struct {
	Pattern string
	Glob    bool
	Fold    bool
	// Name is the rule's key for messages ("filesystem.denyRead",
	// "mandatory.shellStartup"); Text is the pattern as written and
	// Source where ("fence.jsonc:12:5"), both empty for fence's own.
	Name, Text, Source string
	// Origin is the rule's origin, as the plan's masks name it.
	Origin string
	// Resolved are the other spellings of the pattern on this disk, its
	// links resolved; a deny covers each.
	Resolved []string
	// Matches are the paths the rule named at start, their links
	// resolved, as the plan's masks and read-only binds protect them on
	// Linux: each is denied by its own literal path too, so that a link
	// the pattern matches leads to a denied file, and renaming a directory
	// on the way (out of the pattern) moves nothing out of the deny.
	Matches []string
}

// ExecDeny is a one-word command rule and the files that run it.
type ExecDeny struct {
	Rule     string // as written, e.g. "sudo"
	Name     string // the command name
	Binaries []string
}

// Finder answers the questions about the disk the profile needs.
type Finder interface {
	// Resolve is p with its links resolved (a missing tail joined back
	// as written).
	Resolve(p string) string
	// Executables are the files a command name runs, from the PATH and
	// the standard directories, each as found and resolved.
	Executables(name string) []Executable
}

// Executable is a file a command name runs: where it was found, and what
// that leads to, its links resolved.
type Executable struct{ Path, Target string }

// InputFromPolicy maps a compiled policy (allow rules already resolved
// through their links by sandbox.GuardLinks) to the compiler's input,
// asking f about deny rules' links and command rules' binaries.
func InputFromPolicy(p *policy.Policy, o ProfileOptions, f Finder) Input {
	in := Input{
		ReadMode: p.ReadMode, Read: pathRules(p.Read, nil), Execute: pathRules(p.Execute, nil), Write: pathRules(p.Write, nil),
		DenyRead: denyRules(p.DenyRead, f), DenyWrite: denyRules(p.DenyWrite, f),
		UnixSockets: pathRules(p.UnixSockets, nil), AllUnixSockets: p.AllUnixSockets,
		HostNetwork: p.HostNetwork, LocalBinding: p.LocalBinding, LocalOutboundPorts: p.LocalOutboundPorts,
		MachLookup: p.MachLookup, MachRegister: p.MachRegister, AllowPty: p.AllowPty,
		RuntimeExec: p.RuntimeExec, Home: p.Home, ProfileOptions: o,
	}
	in.HomeResolved = resolvedHome(p.Home, f)
	for _, r := range p.CommandDeny {
		if !oneWord(r) {
			continue
		}
		found := f.Executables(r.Tokens[0])
		if filepath.IsAbs(r.Tokens[0]) {
			found = []Executable{{Path: r.Tokens[0], Target: f.Resolve(r.Tokens[0])}}
		}
		if bins := execBinaries(r.Tokens[0], found, p.SharedBinariesAccepted); len(bins) > 0 {
			in.ExecDenies = append(in.ExecDenies, ExecDeny{Rule: r.Text, Name: r.Tokens[0], Binaries: bins})
		}
	}
	return in
}

// resolvedHome is home with its links resolved, when that differs.
func resolvedHome(home string, f Finder) string {
	if home == "" || f == nil {
		return ""
	}
	if real := f.Resolve(home); real != home && real != darwinPath(home) {
		return real
	}
	return ""
}

// oneWord reports whether r is a one-word command rule naming a program
// (sudo) or a file (/usr/bin/sudo), not a glob.
func oneWord(r policy.CommandRule) bool {
	return len(r.Tokens) == 1 && !r.IsGlob(0) && (filepath.IsAbs(r.Tokens[0]) || !strings.Contains(r.Tokens[0], "/"))
}

// execBinaries are the paths to deny running for a command name: each
// file found and its target, but none of a program of another name that
// command.acceptSharedBinaryCannotRuntimeDeny names (as on Linux, that
// one is blocked at preflight only).
func execBinaries(name string, found []Executable, accepted []string) []string {
	var out []string
	for _, e := range found {
		if base := filepath.Base(e.Target); base != filepath.Base(name) && slices.Contains(accepted, base) {
			continue
		}
		out = appendNew(out, e.Path, e.Target)
	}
	return out
}

// denyRules maps deny rules, every one ignoring case and Unicode
// normalization whoever made it (the user, fence's mandatory rules, the
// upstream proxy's credential files): macOS's file systems mostly ignore
// both, and a deny must hold whatever spelling the command uses.
func denyRules(rules []policy.Rule, f Finder) []PathRule {
	out := pathRules(rules, f)
	for i := range out {
		out[i].Fold = true
	}
	return out
}

// pathRules maps rules; with f, each plain pattern gets its resolved
// spelling when that differs.
func pathRules(rules []policy.Rule, f Finder) []PathRule {
	out := make([]PathRule, 0, len(rules))
	for _, r := range rules {
		pr := PathRule{Pattern: r.Pattern, Glob: r.Glob, Fold: r.Fold, Name: r.Key, Text: r.Text, Source: cmp.Or(r.Pos, r.Source), Origin: r.Origin}
		if pr.Name == "" {
			pr.Name, _, _ = strings.Cut(r.Origin, " ")
		}
		if f != nil {
			base := r.Pattern
			if r.Glob {
				base = literalDir(r.Pattern)
			}
			if real := f.Resolve(base); real != base && real != darwinPath(base) {
				pr.Resolved = append(pr.Resolved, real+strings.TrimPrefix(r.Pattern, base))
			}
		}
		out = append(out, pr)
	}
	return out
}

// literalDir is the directory part of a glob before its first
// metacharacter: "/w/src" for "/w/src/**/*.pem".
func literalDir(pattern string) string {
	i := strings.IndexAny(pattern, `*?[{\`)
	if i < 0 {
		return pattern
	}
	d := pattern[:i]
	if j := strings.LastIndexByte(d, '/'); j > 0 {
		return d[:j]
	}
	return "/"
}

// CheckRun refuses what the macOS backend cannot enforce: it returns why
// the run must not start (exit 125), or nil.
func CheckRun(in Input) error {
	if in.RuntimeExec == "argv" {
		return errors.New(`refusing to run: command.runtimeExecPolicy "argv" judges every exec's arguments, which the macOS sandbox cannot do; ` +
			`use "path" (the default) on macOS`)
	}
	return nil
}

// HostFinder looks at this machine's disk, with the PATH given.
type HostFinder struct{ Path string }

// Resolve resolves p's links as far as p exists, the rest joined back.
func (h HostFinder) Resolve(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == "/" || dir == "." {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// Executables finds name in the PATH and the standard directories.
func (h HostFinder) Executables(name string) []Executable {
	var out []Executable
	for _, d := range slices.Concat(filepath.SplitList(h.Path), sandbox.StandardBinDirs) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		out = append(out, Executable{Path: p, Target: h.Resolve(p)})
	}
	return out
}
