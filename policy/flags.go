package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// KindCommandLine marks rules given as policy flags for one run. It sits
// at the head of the chain, over the config it changes.
const KindCommandLine SourceKind = "command-line"

// The write modes of Flags.Mode.
const (
	ModeReadOnly       = "read-only"       // nothing writable but the private /tmp
	ModeWorkspaceWrite = "workspace-write" // writes only under the workspace root
	ModeFull           = "full"            // writes anywhere but the denies and protections
)

// Flags change the policy for one run. Deny flags add rules that no config
// can lift (a command.allow does not give way for a --deny-command), and
// allow flags add rules that every deny still beats.
type Flags struct {
	AllowRead, AllowWrite []string
	DenyRead, DenyWrite   []string
	AllowDomains          []string
	DenyDomains           []string
	DenyCommands          []string
	NoNetwork             bool
	Mode                  string
	// NoRefusalSummary silences the line at exit that counts the
	// connections the proxies refused (network.refusalSummary false).
	NoRefusalSummary bool
}

// IsZero reports whether f changes nothing.
func (f Flags) IsZero() bool {
	return len(f.AllowRead)+len(f.AllowWrite)+len(f.DenyRead)+len(f.DenyWrite)+
		len(f.AllowDomains)+len(f.DenyDomains)+len(f.DenyCommands) == 0 && !f.NoNetwork && f.Mode == "" && !f.NoRefusalSummary
}

// Args spells f as the command line gave it, for the chain.
func (f Flags) Args() []string {
	var out []string
	if f.Mode != "" {
		out = append(out, "--mode="+f.Mode)
	}
	if f.NoNetwork {
		out = append(out, "--no-network")
	}
	if f.NoRefusalSummary {
		out = append(out, "--no-refusal-summary")
	}
	for _, l := range []struct {
		flag   string
		values []string
	}{
		{"--allow-read", f.AllowRead}, {"--allow-write", f.AllowWrite}, {"--deny-read", f.DenyRead}, {"--deny-write", f.DenyWrite},
		{"--allow-domain", f.AllowDomains}, {"--deny-domain", f.DenyDomains}, {"--deny-command", f.DenyCommands},
	} {
		for _, v := range l.values {
			if strings.ContainsAny(v, " \t\n\"'\\") {
				v = strconv.Quote(v)
			}
			out = append(out, l.flag+"="+v)
		}
	}
	return out
}

// Apply layers f over the resolved config: the mode first replaces the
// config's allowWrite, --no-network empties every network allowance, and
// the rest are appended as if a file at the head of the chain held them.
// dir is the working directory; workspace-write opens WorkspaceRoot(dir).
func (r *Resolved) Apply(f Flags, dir string) error {
	if f.IsZero() {
		return nil
	}
	if err := f.check(r.Config); err != nil {
		return err
	}
	cfg := r.Config
	switch f.Mode {
	case ModeReadOnly:
		cfg.Filesystem.AllowWrite = nil
	case ModeWorkspaceWrite:
		cfg.Filesystem.AllowWrite = []string{WorkspaceRoot(dir)}
	case ModeFull:
		cfg.Filesystem.AllowWrite = fullWriteRoots()
	}
	if f.NoNetwork {
		off := false
		cfg.Network.AllowedDomains, cfg.Network.AllowUnixSockets, cfg.Network.AllowLocalOutboundPorts = nil, nil, nil
		cfg.Network.AllowPrivateAddresses = nil
		cfg.Network.DefaultAction, cfg.Network.UpstreamProxy = "", ""
		// Servers may still listen in the sandbox's own namespace,
		// which reaches nothing: an offline test run works.
		cfg.Network.AllowAllUnixSockets, cfg.Network.AllowLocalBinding, cfg.Network.AllowLocalOutbound = false, nil, &off
		cfg.SSH.AllowedHosts = nil
		r.NoNetwork = true
	}
	if f.NoRefusalSummary {
		off := false
		cfg.Network.RefusalSummary = &off
	}
	var add Config
	add.Filesystem = Filesystem{AllowRead: f.AllowRead, AllowWrite: f.AllowWrite, DenyRead: f.DenyRead, DenyWrite: f.DenyWrite}
	add.Network = Network{AllowedDomains: f.AllowDomains, DeniedDomains: f.DenyDomains}
	add.Command = Command{Deny: f.DenyCommands}
	if f.Mode == ModeWorkspaceWrite || f.Mode == ModeFull {
		add.Filesystem.AllowWrite = append(slices.Clone(cfg.Filesystem.AllowWrite), add.Filesystem.AllowWrite...)
	}
	src := Source{Kind: KindCommandLine}
	for key, values := range map[string][]string{
		"filesystem.allowRead": f.AllowRead, "filesystem.allowWrite": add.Filesystem.AllowWrite,
		"filesystem.denyRead": f.DenyRead, "filesystem.denyWrite": f.DenyWrite,
		"network.allowedDomains": f.AllowDomains, "network.deniedDomains": f.DenyDomains,
		"command.deny": f.DenyCommands,
	} {
		for _, v := range values {
			r.origins[key+"\x00"+v] = Origin{Source: src}
		}
	}
	r.Config = Merge(cfg, add)
	r.Chain = append(Chain{{Kind: KindCommandLine, Flags: strings.Join(f.Args(), " ")}}, r.Chain...)
	return nil
}

// check refuses flags that contradict each other or that the sandbox
// could not enforce.
func (f Flags) check(c Config) error {
	switch f.Mode {
	case "", ModeReadOnly, ModeWorkspaceWrite, ModeFull:
	default:
		return fmt.Errorf("--mode %q: want %s, %s or %s", f.Mode, ModeReadOnly, ModeWorkspaceWrite, ModeFull)
	}
	if f.Mode == ModeReadOnly && len(f.AllowWrite) > 0 {
		return fmt.Errorf("--mode %s makes nothing writable; drop --allow-write %q or choose --mode %s", ModeReadOnly, f.AllowWrite[0], ModeWorkspaceWrite)
	}
	if f.NoNetwork && len(f.AllowDomains) > 0 {
		return fmt.Errorf("--no-network forbids every domain; drop --allow-domain %q", f.AllowDomains[0])
	}
	if len(f.DenyDomains) > 0 && slices.Contains(c.Network.AllowedDomains, "*") && !f.NoNetwork {
		return fmt.Errorf("--deny-domain %q cannot be enforced: network.allowedDomains holds \"*\", which gives the command the host's network; list the domains it needs instead", f.DenyDomains[0])
	}
	for _, list := range [][]string{f.AllowRead, f.AllowWrite, f.DenyRead, f.DenyWrite, f.AllowDomains, f.DenyDomains, f.DenyCommands} {
		for _, v := range list {
			if v == "" {
				return errors.New("a policy flag was given an empty value")
			}
		}
	}
	if slices.Contains(f.AllowDomains, "*") {
		return errors.New("--allow-domain \"*\" would give the command the host's network; write it in a config file if that is meant")
	}
	return validateFlagConfig(f)
}

// validateFlagConfig checks each flag value as a config file entry is
// checked, and names the flag that holds a bad one.
func validateFlagConfig(f Flags) error {
	type entry struct {
		flag   string
		values []string
		set    func(*Config, []string)
	}
	for _, e := range []entry{
		{"--allow-read", f.AllowRead, func(c *Config, v []string) { c.Filesystem.AllowRead = v }},
		{"--allow-write", f.AllowWrite, func(c *Config, v []string) { c.Filesystem.AllowWrite = v }},
		{"--deny-read", f.DenyRead, func(c *Config, v []string) { c.Filesystem.DenyRead = v }},
		{"--deny-write", f.DenyWrite, func(c *Config, v []string) { c.Filesystem.DenyWrite = v }},
		{"--allow-domain", f.AllowDomains, func(c *Config, v []string) { c.Network.AllowedDomains = v }},
		{"--deny-domain", f.DenyDomains, func(c *Config, v []string) { c.Network.DeniedDomains = v }},
		{"--deny-command", f.DenyCommands, func(c *Config, v []string) { c.Command.Deny = v }},
	} {
		for _, v := range e.values {
			var c Config
			e.set(&c, []string{v})
			_, err := parseValid("command line", c.JSON())
			if fe := (*FileError)(nil); errors.As(err, &fe) {
				return fmt.Errorf("%s %q: %s", e.flag, v, fe.Msg)
			} else if err != nil {
				return fmt.Errorf("%s %q: %w", e.flag, v, err)
			}
		}
	}
	return nil
}

// kernelTrees are the top-level directories --mode full leaves as the
// sandbox makes them: its own /proc, /dev and /tmp, and a read-only /sys.
var kernelTrees = []string{"proc", "sys", "dev", "tmp"}

// fullWriteRoots are the host's top-level directories but kernelTrees:
// what --mode full makes writable. Symbolic links (/bin to usr/bin) are
// left out, their targets are in the list.
func fullWriteRoots() []string {
	entries, err := inputs.ReadDir("/")
	if err != nil {
		return nil // nothing writable: the mode fails closed
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(kernelTrees, e.Name()) {
			out = append(out, "/"+e.Name())
		}
	}
	return out
}

// FromCommandLine reports whether the list entry value of key was given
// as a policy flag.
func (r *Resolved) FromCommandLine(key, value string) bool {
	o, ok := r.Origin(key, value)
	return ok && o.Source.Kind == KindCommandLine
}

// WorkspaceRoot is the root that workspace-write opens: the top level of
// the git work tree that holds dir, else dir itself.
func WorkspaceRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := inputs.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}
