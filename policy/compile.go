package policy

import (
	"cmp"
	"net/netip"
	"path"
	"slices"
	"strings"
)

// Env is what Compile needs to know about where fence runs: the working
// directory (the workspace), the user's home, and the config files that
// produced the policy.
type Env struct {
	Dir string
	// Root is the workspace root (the git top level) when Dir lies below
	// it; the files that run code or change policy are protected in every
	// directory from Dir up to Root. Empty means Dir.
	Root string
	Home string
	// UserConfigDir is this run's user config directory
	// ($XDG_CONFIG_HOME/fence, else ~/.config/fence). ~/.config/fence is
	// protected as well: a run with another XDG_CONFIG_HOME reads it.
	UserConfigDir string
	// DataHome and StateHome are $XDG_DATA_HOME and $XDG_STATE_HOME when
	// set to absolute paths; the routine files below them are protected
	// there and below ~/.local/share and ~/.local/state alike.
	DataHome, StateHome string
	ConfigFiles         []string
	// UpstreamCredentialFiles are the config files that hold the upstream
	// proxy's credentials: unreadable inside (KeyUpstreamCredentials).
	UpstreamCredentialFiles []string
	// NoNetwork says --no-network emptied the network allowances
	// (Resolved.NoNetwork): a refused connection then names the flag.
	NoNetwork bool
	// Origin names where a list entry was written (Resolved.Origin), for
	// messages; nil leaves rules without one.
	Origin func(key, value string) string
	// Position is where in its file a list entry was written
	// ("FILE:LINE:COL"), for refusals that point at it; nil or "" for
	// none.
	Position func(key, value string) string
	// Firm says a list entry was given as a policy flag (Resolved.FromCommandLine);
	// nil means none was.
	Firm func(key, value string) bool
	// PathDirs are the absolute directories of the caller's PATH (see
	// PathDirs): writable only where an allowWrite rule names them.
	PathDirs []string
	// FenceBinary is the running fence binary, symlinks resolved; it and
	// its directory are write-protected. Empty when unknown.
	FenceBinary string
	// FenceInvoked is the absolute path fence was run by, symlinks not
	// resolved (./tools/fence when that links to the binary); it and its
	// directory are write-protected too. Empty when unknown.
	FenceInvoked string
	// PlanCacheDirs are the plan cache's directories, this run's
	// ($XDG_CACHE_HOME/fence) and ~/.cache/fence, write-protected
	// (KeyPlanCache) even where the policy lets the command write the
	// user cache dir.
	PlanCacheDirs []string
	// WSL says the kernel is WSL's (see filesystem.wslInterop).
	WSL bool
	// AgentHomes are the agents' directories moved by their variables
	// (see AgentHomes), by the directory below $HOME each stands for;
	// they are protected as that directory is.
	AgentHomes map[string]string
}

// Rule is one path rule with its meaning fixed: Pattern is absolute, with
// "~" and relative paths expanded; Glob says it holds glob characters;
// Fold says it matches without regard to case (deny rules do). Origin
// names the rule as the user wrote it, for messages.
type Rule struct {
	Pattern string `json:"pattern"`
	Glob    bool   `json:"glob,omitempty"`
	Fold    bool   `json:"fold,omitempty"`
	Origin  string `json:"origin"`
	// Key is the rule's kind, such as "filesystem.denyRead" or
	// "mandatory.shellStartup"; Text is the pattern as written, empty for
	// fence's own defaults; Source is the file or template holding it.
	Key    string `json:"key,omitempty"`
	Text   string `json:"text,omitempty"`
	Source string `json:"source,omitempty"`
	// Pos is where in Source the rule was written ("FILE:LINE:COL"),
	// when it is a file's.
	Pos string `json:"pos,omitempty"`

	folded string // Pattern in lower case, for matching when Fold
}

// ReadMode says which paths are readable before denyRead applies.
type ReadMode string

// The read modes.
const (
	ReadOpen        ReadMode = "open"         // everything
	ReadDefaultDeny ReadMode = "default-deny" // system paths, workspace, allow rules
	ReadStrict      ReadMode = "strict"       // workspace and allow rules only
)

// Policy is a resolved Config compiled for one working directory: the
// filesystem rules with their meaning fixed, ready for the sandbox to
// match against the disk.
type Policy struct {
	Dir       string   `json:"dir"`
	Home      string   `json:"home"`
	ReadMode  ReadMode `json:"readMode"`
	Read      []Rule   `json:"read,omitempty"`    // readable (and listable) trees
	Execute   []Rule   `json:"execute,omitempty"` // readable and executable, not listable
	Write     []Rule   `json:"write,omitempty"`
	DenyRead  []Rule   `json:"denyRead,omitempty"`
	DenyWrite []Rule   `json:"denyWrite,omitempty"` // includes the mandatory protections
	// HostNetwork is true when allowedDomains holds "*".
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// AllowedDomains and DeniedDomains are normalised (see NormalizeHost).
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	DeniedDomains  []string `json:"deniedDomains,omitempty"`
	// HTTPProxyPort and SocksProxyPort are where the proxies listen on the
	// sandbox's loopback.
	HTTPProxyPort  int `json:"httpProxyPort"`
	SocksProxyPort int `json:"socksProxyPort"`
	// LocalOutboundPorts are the host loopback TCP ports the sandbox may
	// reach, at the same numbers inside.
	LocalOutboundPorts []int `json:"localOutboundPorts,omitempty"`
	// AllowPrivateAddresses are the private ranges an allowed name may
	// resolve to (network.allowPrivateAddresses), masked.
	AllowPrivateAddresses []netip.Prefix `json:"allowPrivateAddresses,omitempty"`
	// Upstream is where hosts no domain rule names are forwarded
	// (network.defaultAction "proxy"); nil refuses them.
	Upstream *UpstreamProxy `json:"upstream,omitempty"`
	// UnixSockets are the host unix sockets the command may connect to;
	// AllUnixSockets allows every one.
	UnixSockets    []Rule `json:"unixSockets,omitempty"`
	AllUnixSockets bool   `json:"allUnixSockets,omitempty"`
	// LocalBinding lets servers inside listen wherever the sandbox's
	// network is (network.allowLocalBinding true); NamespaceBinding lets
	// them listen in a private network namespace of the sandbox's own
	// (unless network.allowLocalBinding is false).
	LocalBinding     bool `json:"localBinding,omitempty"`
	NamespaceBinding bool `json:"namespaceBinding,omitempty"`
	// RefusalSummary says fence counts, at exit, the connections the
	// proxies refused (network.refusalSummary, unset means true).
	RefusalSummary bool `json:"refusalSummary,omitempty"`
	// NoNetwork is Env.NoNetwork.
	NoNetwork   bool     `json:"noNetwork,omitempty"`
	EnvDeny     []string `json:"envDeny,omitempty"`
	EnvAllow    []string `json:"envAllow,omitempty"`
	DeviceMode  string   `json:"deviceMode"`
	DeviceAllow []string `json:"deviceAllow,omitempty"`
	// MachLookup and MachRegister are the macOS Mach services allowed.
	MachLookup   []string `json:"machLookup,omitempty"`
	MachRegister []string `json:"machRegister,omitempty"`
	AllowPty     bool     `json:"allowPty,omitempty"`
	// ForceNewSession is the key of that name: the command gets a
	// session of its own, with no controlling terminal.
	ForceNewSession bool `json:"forceNewSession,omitempty"`
	// CommandDeny and CommandAllow are the command rules, defaults
	// included; CommandDynamic is "allow" or "deny".
	CommandDeny    []CommandRule `json:"commandDeny,omitempty"`
	CommandAllow   []CommandRule `json:"commandAllow,omitempty"`
	CommandDynamic string        `json:"commandDynamic"`
	// SharedBinariesAccepted are binaries a one-word deny rule may not
	// block at run time (command.acceptSharedBinaryCannotRuntimeDeny).
	SharedBinariesAccepted []string `json:"sharedBinariesAccepted,omitempty"`
	// SSH holds the rules for ssh commands.
	SSH SSHPolicy `json:"ssh,omitzero"`
	// RuntimeExec is "path" or "argv" (command.runtimeExecPolicy).
	RuntimeExec string `json:"runtimeExec"`
	// Limits bound what the command may use.
	Limits RunLimits `json:"limits,omitzero"`
	// AuditFile gets a JSON line per denial (audit.file), absolute; empty
	// for none.
	AuditFile string `json:"auditFile,omitempty"`
	// GlobBudgetMs is filesystem.globBudgetMs: zero means the sandbox's
	// default.
	GlobBudgetMs int `json:"globBudgetMs,omitempty"`

	denyIndex commandIndex
	// domainOrigins names where each normalised domain rule was written,
	// keyed by "network.allowedDomains\x00rule".
	domainOrigins map[string]string
	// envOrigins names where each env.deny and env.allow pattern was
	// written, keyed by "env.deny\x00pattern".
	envOrigins map[string]string
}

// The proxies' default ports on the sandbox's loopback.
const (
	DefaultHTTPProxyPort  = 3128
	DefaultSocksProxyPort = 1080
)

// SystemReadPaths are readable under defaultDenyRead (not strictDenyRead).
var SystemReadPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/run", "/proc", "/sys", "/dev"}

// ToolchainReadPaths are the language toolchain directories under $HOME
// that are readable under defaultDenyRead.
var ToolchainReadPaths = []string{"~/.cargo/bin", "~/.rustup", "~/go/bin", "~/.local/bin", "~/.pyenv", "~/.nvm", "~/.bun/bin", "~/.deno/bin", "~/.volta", "~/.sdkman", "~/.rbenv", "~/.asdf", "~/.local/share/mise"}

// workspaceProtected are write-protected in the workspace: git's files
// that make it run code. The files other tools run are routineGroups.
var workspaceProtected = []string{".git/hooks", ".gitmodules"}

// OriginConfigPath marks the protection of a path where fence looks for
// config; a sandbox that creates one there would widen its next policy.
const OriginConfigPath = "always protected: a path fence reads config from"

// Compile fixes the meaning of every rule of c for env: it expands "~" and
// relative paths, adds the system paths for defaultDenyRead, and adds the
// write protections no config can lift.
func Compile(c Config, env Env) *Policy {
	fs := c.Filesystem
	p := &Policy{
		Dir:            env.Dir,
		Home:           env.Home,
		ReadMode:       ReadOpen,
		HostNetwork:    slices.Contains(c.Network.AllowedDomains, "*"),
		AllowedDomains: normalizeRules(c.Network.AllowedDomains),
		DeniedDomains:  normalizeRules(c.Network.DeniedDomains),
		HTTPProxyPort:  cmp.Or(c.Network.HTTPProxyPort, DefaultHTTPProxyPort),
		SocksProxyPort: cmp.Or(c.Network.SocksProxyPort, DefaultSocksProxyPort),
		LocalBinding:   isTrue(c.Network.AllowLocalBinding),
		// Unset, servers may listen in a private network namespace, which
		// reaches nothing of the host's.
		NamespaceBinding: c.Network.AllowLocalBinding == nil || *c.Network.AllowLocalBinding,
		RefusalSummary:   c.Network.RefusalSummary == nil || *c.Network.RefusalSummary,
		NoNetwork:        env.NoNetwork,
		EnvDeny:          c.Env.Deny,
		EnvAllow:         c.Env.Allow,
		DeviceMode:       c.Devices.Mode,
		DeviceAllow:      c.Devices.Allow,
		AllowPty:         c.AllowPty,
		ForceNewSession:  c.ForceNewSession,
		MachLookup:       c.MacOS.Mach.Lookup,
		MachRegister:     c.MacOS.Mach.Register,
	}
	if localOutbound := c.Network.AllowLocalOutbound; localOutbound != nil && *localOutbound || localOutbound == nil && isTrue(c.Network.AllowLocalBinding) {
		p.LocalOutboundPorts = c.Network.AllowLocalOutboundPorts
	}
	p.AllowPrivateAddresses = privateRanges(c.Network.AllowPrivateAddresses)
	p.Upstream = compileUpstream(c.Network, env)
	if c.Audit.File != "" {
		p.AuditFile = Expand(c.Audit.File, env.Dir, env.Home)
	}
	p.Limits = compileLimits(c.Limits)
	p.GlobBudgetMs = fs.GlobBudgetMs
	p.domainOrigins = domainOrigins(c.Network, env)
	p.envOrigins = envOrigins(c.Env, env)
	compileCommands(p, c.Command, c.SSH, env)
	if p.DeviceMode == "" || p.DeviceMode == "auto" {
		p.DeviceMode = "minimal"
	}
	exp := expander{env: env}
	switch {
	case fs.StrictDenyRead:
		p.ReadMode = ReadStrict
	case fs.DefaultDenyRead:
		p.ReadMode = ReadDefaultDeny
		p.Read = append(exp.defaults(SystemReadPaths, "default-deny system path", KeyDefaultDenyRead), exp.defaults(ToolchainReadPaths, "default-deny toolchain path", KeyDefaultDenyRead)...)
	}
	if p.ReadMode == ReadOpen {
		p.Read = openReadsBelowTmp(fs.AllowRead, exp)
	} else {
		wd := exp.rule(".", "the working directory", false)
		wd.Key = KeyWorkspace
		p.Read = append(p.Read, wd)
		p.Read = append(p.Read, exp.rules(fs.AllowRead, "filesystem.allowRead", false)...)
	}
	p.Execute = append(exp.rules(fs.AllowExecute, "filesystem.allowExecute", false), wslRules(fs, env)...)
	p.UnixSockets = exp.rules(c.Network.AllowUnixSockets, "network.allowUnixSockets", false)
	p.AllUnixSockets = c.Network.AllowAllUnixSockets
	p.Write = exp.rules(fs.AllowWrite, "filesystem.allowWrite", false)
	p.DenyRead = append(exp.rules(fs.DenyRead, "filesystem.denyRead", true), upstreamCredentialRules(env, exp)...)
	p.DenyWrite = append(exp.rules(fs.DenyWrite, "filesystem.denyWrite", true), mandatoryDenyWrite(c, env, exp, p.Write)...)
	return p
}

// KeyPlanCache is the rule that keeps fence's plan cache read-only in
// the sandbox. The Landlock-only engine leaves it out (see
// sandbox.KindPlanCache).
const KeyPlanCache = "mandatory.planCache"

func mandatoryDenyWrite(c Config, env Env, exp expander, write []Rule) []Rule {
	var out []Rule
	add := func(p, origin, key string) {
		r := exp.rule(p, origin, false)
		r.Key, r.Source = key, "fence (always protected)"
		out = append(out, r)
	}
	out = append(out, routineRules(env, exp, write)...)
	for _, dir := range workspaceDirs(env) {
		for _, f := range workspaceProtected {
			add(path.Join(dir, f), "always protected: runs code or changes policy", "mandatory.workspace")
		}
		if !c.Filesystem.AllowGitConfig {
			add(path.Join(dir, ".git/config"), "always protected: .git/config (set filesystem.allowGitConfig to lift)", "mandatory.gitConfig")
		}
	}
	for _, f := range env.ConfigFiles {
		add(f, "always protected: config file in the chain", "mandatory.configFile")
	}
	if c.Audit.File != "" {
		add(c.Audit.File, "always protected: the audit log", "mandatory.auditLog")
		add(c.Audit.File+".*", "always protected: the audit log", "mandatory.auditLog")
	}
	for _, f := range configCandidates(env) {
		add(f, OriginConfigPath, "mandatory.configPath")
	}
	for _, d := range env.PlanCacheDirs {
		add(d, "always protected: fence's plan cache (a command that changed it would steer the next runs' lookups and pruning)", KeyPlanCache)
	}
	out = append(out, fenceBinaryRules(env, exp)...)
	out = append(out, pathDirRules(env, exp, write)...)
	return dedupeRules(out)
}

// workspaceDirs are Dir and each directory above it up to Root: a command
// run in a subdirectory must not reach the hooks of the repository
// around it.
func workspaceDirs(env Env) []string {
	out := []string{path.Clean(env.Dir)}
	root := path.Clean(env.Root)
	if env.Root == "" || !strings.HasPrefix(out[0], root+"/") {
		return out
	}
	for dir := path.Dir(out[0]); strings.HasPrefix(dir, root); dir = path.Dir(dir) {
		out = append(out, dir)
		if dir == root {
			break
		}
	}
	return out
}

// configCandidates are the files config discovery would read: fence.jsonc
// and fence.json in the working directory and every directory above it,
// the user config directory, both this run's and ~/.config/fence (a
// run with XDG_CONFIG_HOME set must not write the user config, and trust
// record, of a later run without it), and the legacy user config files
// in the home.
func configCandidates(env Env) []string {
	var out []string
	for dir := path.Clean(env.Dir); ; dir = path.Dir(dir) {
		out = append(out, path.Join(dir, "fence.jsonc"), path.Join(dir, "fence.json"))
		if dir == "/" || dir == "." {
			break
		}
	}
	if env.UserConfigDir != "" {
		out = append(out, path.Clean(env.UserConfigDir))
	}
	if env.Home != "" {
		if dflt := path.Join(env.Home, ".config", "fence"); !slices.Contains(out, dflt) {
			out = append(out, dflt)
		}
		out = append(out, path.Join(env.Home, ".fence.jsonc"), path.Join(env.Home, ".fence.json"))
	}
	return out
}

type expander struct{ env Env }

func (e expander) rule(pattern, origin string, fold bool) Rule {
	abs := Expand(pattern, e.env.Dir, e.env.Home)
	r := Rule{Pattern: abs, Glob: hasGlob(abs), Fold: fold, Origin: origin}
	if fold {
		r.folded = strings.ToLower(abs)
	}
	return r
}

func (e expander) rules(patterns []string, key string, fold bool) []Rule {
	out := make([]Rule, 0, len(patterns))
	for _, p := range patterns {
		origin := key
		r := Rule{}
		if strings.Contains(key, ".") {
			origin = key + " " + quote(p)
			r = e.rule(p, origin, fold)
			r.Key, r.Text = key, p
			if e.env.Origin != nil {
				r.Source = e.env.Origin(key, p)
			}
			if e.env.Position != nil {
				r.Pos = e.env.Position(key, p)
			}
		} else {
			r = e.rule(p, origin, fold)
			r.Key = origin
		}
		out = append(out, r)
	}
	return out
}

// The keys of fence's own read rules, for decisions.
const (
	KeyDefaultDenyRead = "filesystem.defaultDenyRead" // the system and toolchain paths
	KeyWorkspace       = "workspace"                  // the working directory
)

// defaults are fence's own rules for patterns, with the origin people
// read and the key decisions name.
func (e expander) defaults(patterns []string, origin, key string) []Rule {
	out := make([]Rule, 0, len(patterns))
	for _, p := range patterns {
		r := e.rule(p, origin, false)
		r.Key = key
		out = append(out, r)
	}
	return out
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func hasGlob(p string) bool { return indexMeta(p) >= 0 }

func dedupeRules(rules []Rule) []Rule {
	seen := map[string]bool{}
	out := rules[:0]
	for _, r := range rules {
		if !seen[r.Pattern] {
			seen[r.Pattern] = true
			out = append(out, r)
		}
	}
	return out
}

func compileCommands(p *Policy, c Command, ssh SSH, env Env) {
	origin := func(key string) func(string) string {
		return func(v string) string {
			if env.Origin == nil {
				return ""
			}
			return env.Origin(key, v)
		}
	}
	if c.UseDefaults == nil || *c.UseDefaults {
		p.CommandDeny = commandRules(DefaultCommandDeny, func(string) string { return "builtin defaults (command.useDefaults)" })
		for i := range p.CommandDeny {
			p.CommandDeny[i].Builtin = true
		}
	}
	firm := len(p.CommandDeny)
	p.CommandDeny = append(p.CommandDeny, commandRules(c.Deny, origin("command.deny"))...)
	for i := firm; i < len(p.CommandDeny) && env.Firm != nil; i++ {
		p.CommandDeny[i].Firm = env.Firm("command.deny", p.CommandDeny[i].Text)
	}
	p.CommandAllow = commandRules(c.Allow, origin("command.allow"))
	p.denyIndex = newCommandIndex(p.CommandDeny)
	p.CommandDynamic = cmp.Or(c.Dynamic, "allow")
	p.SSH = compileSSH(ssh, origin)
	p.SharedBinariesAccepted = c.AcceptSharedBinaryCannotRuntimeDeny
	p.RuntimeExec = cmp.Or(c.RuntimeExecPolicy, "path")
}

// domainOrigins maps each normalised domain rule to where it was written.
func domainOrigins(n Network, env Env) map[string]string {
	out := map[string]string{}
	if env.Origin == nil {
		return out
	}
	for key, rules := range map[string][]string{"network.allowedDomains": n.AllowedDomains, "network.deniedDomains": n.DeniedDomains} {
		for i, norm := range normalizeRules(rules) {
			out[key+"\x00"+norm] = env.Origin(key, rules[i])
		}
	}
	if n.DefaultAction != "" {
		out["network.defaultAction\x00"+n.DefaultAction] = env.Origin("network.defaultAction", n.DefaultAction)
	}
	for _, r := range n.AllowPrivateAddresses {
		if pr, err := ParsePrivateRange(r); err == nil {
			out["network.allowPrivateAddresses\x00"+pr.Masked().String()] = env.Origin("network.allowPrivateAddresses", r)
		}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }
