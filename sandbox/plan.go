package sandbox

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// Plan is everything a backend needs to run one command: plain data that
// `fence plan` prints and tests inspect without running anything.
type Plan struct {
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	// Env is the command's environment. It stays out of printed plans,
	// which show only the names removed from it.
	Env        []string `json:"-"`
	EnvRemoved []string `json:"envRemoved,omitempty"`
	UID        int      `json:"uid"`
	GID        int      `json:"gid"`
	// Network is "none" (a private network namespace with loopback only,
	// where fence's proxies are the way out) or "host".
	Network string `json:"network"`
	// Proxy says where the proxies listen inside the sandbox and what
	// they allow; nil when the network is the host's.
	Proxy    *Proxy   `json:"proxy,omitempty"`
	Mounts   Mounts   `json:"mounts"`
	Landlock Landlock `json:"landlock"`
	// LandlockOnly is how the Landlock-only engine enforces the plan,
	// where fence cannot create user namespaces; nil unless
	// Options.LandlockOnly (see WithLandlockOnly).
	LandlockOnly *LandlockOnlyPlan `json:"landlockOnly,omitempty"`
	// Rules are the policy's rules themselves, which the macOS profile
	// is compiled from.
	Rules Rules `json:"rules"`
	// HostSockets are the host's unix sockets found at start that the
	// policy does not list (see FindHostSockets): masked where the mount
	// layer reaches them, and refused by the Landlock-only engine's
	// supervisor.
	HostSockets []string `json:"hostSockets,omitempty"`
	// Seccomp describes the system call filter, for people; the backend
	// owns the filter itself.
	Seccomp []string `json:"seccomp,omitempty"`
	// Degraded says what to do when the kernel cannot enforce all of the
	// plan: "refuse" (the default) or "warn".
	Degraded string `json:"degraded"`
	// ExecRules, when set, are judged against every execve in the sandbox
	// (runtimeExecPolicy "argv"); the supervisor compiles them when it
	// runs, the init only installs the filter that asks.
	ExecRules *policy.CommandRules `json:"execRules,omitempty"`
	ExecArgv  bool                 `json:"execArgv,omitempty"`
	// Programs are the files the deny rules' command names denote, found
	// at start, and their other names (see ProgramIdentity): preflight
	// and argv mode judge those as the rule's name, path mode masks them.
	Programs []ProgramIdentity `json:"programs,omitempty"`
	// Limits bound the command: the supervisor enforces the timeout, the
	// init sets the rest as resource limits the command inherits.
	Limits policy.RunLimits `json:"limits,omitzero"`
	// NewSession puts the command in a session of its own
	// (forceNewSession): no controlling terminal, and no job control in
	// it, even when fence runs in the foreground of a terminal.
	NewSession bool `json:"newSession,omitempty"`
	// KeepFDs are descriptors of fence's (--keep-fd) the command gets at
	// the same numbers; every other one but 0-2 is closed.
	KeepFDs []int `json:"keepFDs,omitempty"`
	// Monitor reports refused connections as they happen.
	Monitor  bool         `json:"monitor,omitempty"`
	Globs    []GlobReport `json:"globs,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
	// Watch lists protected paths that did not exist at start: the mount
	// layer cannot cover a path that does not exist, so fence checks them
	// after the command.
	Watch []Watch `json:"watch,omitempty"`
	// Worktrees are the linked worktrees of each repository at start: a
	// worktree the command adds is checked after it (see WorktreeWatch).
	Worktrees []WorktreeWatch `json:"worktrees,omitempty"`
	// Gitlinks are the work trees of the repositories at start with the
	// state of their index: a gitlink the command adds to a repository of
	// its own is checked after it (see GitlinkWatch).
	Gitlinks []GitlinkWatch `json:"gitlinks,omitempty"`
}

// GitlinkWatch is a work tree, its index as it was at start, and the
// repositories below it then. A command can create a repository below the
// work tree and record it in the index as a submodule (a gitlink): the
// host's next git status in the work tree then runs that repository's
// config. After the run, fence moves aside the .git of every gitlinked
// directory that was not a repository at start.
type GitlinkWatch struct {
	WorkTree string   `json:"workTree"`
	Index    string   `json:"index"`
	Stamp    string   `json:"stamp"` // size and modification time at start
	HashLen  int      `json:"hashLen"`
	Known    []string `json:"known,omitempty"`
	// Git is the git binary found at start, its links resolved, with its
	// stamp: fence asks it about a split index only if the command has
	// not replaced it.
	Git      string `json:"git,omitempty"`
	GitStamp string `json:"gitStamp,omitempty"`
}

// WorktreeWatch is a repository's common directory and the linked
// worktrees it had at start. A worktree the command adds during the run
// gets its git directory below CommonDir/worktrees, where no mount could
// cover it; after the run, fence moves aside its commondir if it leads
// anywhere but CommonDir, and its config.worktree.
type WorktreeWatch struct {
	CommonDir string   `json:"commonDir"`
	Existing  []string `json:"existing,omitempty"`
	// Modules are the submodules' git directories (CommonDir/modules/*)
	// at start: one the command adds, with hooks and config of its own,
	// is what `git submodule update` would check out and run.
	Modules []string `json:"modules,omitempty"`
}

// Watch is a protected path that did not exist when the sandbox started.
// If the command creates it, fence warns; if it is a place fence reads
// config from, fence also moves it aside, so that a command can never
// write its own next policy.
type Watch struct {
	Path       string `json:"path"`
	Quarantine bool   `json:"quarantine,omitempty"`
	Kind       Kind   `json:"kind"` // KindMissing, KindGlob or KindLink
	Why        string `json:"why"`  // the rule that protects it
	// Missing is the first part of Path that did not exist at start: if
	// it still does not, the command created nothing on the way.
	Missing string `json:"missing,omitempty"`
	// Glob says Path is a pattern; Existing are its matches at start.
	Glob     bool     `json:"glob,omitempty"`
	Existing []string `json:"existing,omitempty"`
	// Link is what Path, a symlink at start, led to: the mount covers
	// the target, not the link, so fence puts the link back after the
	// run if the command replaced it (~/.bashrc linked into a dotfiles
	// repository).
	Link string `json:"link,omitempty"`
}

// Mounts describes the sandbox's view of the filesystem: the host, read
// only, with Binds on top (writable or read-only again), then Masks over
// every denied path.
type Mounts struct {
	PrivateTmp bool     `json:"privateTmp"`
	Devices    string   `json:"devices"`            // "minimal" or "host"
	DevAllow   []string `json:"devAllow,omitempty"` // extra /dev paths passed through
	Binds      []Bind   `json:"binds,omitempty"`    // in order: parents before children
	Masks      []Mask   `json:"masks,omitempty"`    // in order: parents before children
	// RuntimeDir, when set, is the private XDG_RUNTIME_DIR the init makes
	// in the private /tmp (see fixTempEnv).
	RuntimeDir string `json:"runtimeDir,omitempty"`
	// RuntimeDirHost asks the supervisor for a private XDG_RUNTIME_DIR in
	// the host's /tmp, which a rule binds over the private one: a fresh
	// directory, 0700, removed at exit.
	RuntimeDirHost bool `json:"runtimeDirHost,omitempty"`
	// Links are made in the private /tmp before the binds, as they are on
	// the host (see tmpLinks).
	Links []Link `json:"links,omitempty"`
}

// Bind mounts a host path at the same path in the sandbox.
type Bind struct {
	Path  string `json:"path"`
	Write bool   `json:"write"`
	Kind  Kind   `json:"kind"`
	Why   string `json:"why"`
}

// Link is a symlink of the host's below /tmp, made again at the same
// place in the private /tmp, with the same target: a working directory,
// a home or a rule's path spelled through it then works inside too.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"` // as the link says it, unresolved
	Kind   Kind   `json:"kind"`
	Why    string `json:"why"`
}

// Mask hides a denied path: an empty, unreadable file or directory.
type Mask struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Socket marks a host unix socket the policy does not list.
	Socket bool   `json:"socket,omitempty"`
	Kind   Kind   `json:"kind"`
	Why    string `json:"why"`
}

// Landlock is the access the command gets, path by path. Access is one of
// "read" (read and list), "exec" (read and execute files, no listing),
// "write" (everything, including rename across directories and unix
// sockets), "dev" (read, write and ioctl on device files) or "unix"
// (connect to the unix sockets below the path, ABI 9).
type Landlock struct {
	Rules []LandlockRule `json:"rules"`
	// TCP, when set, limits TCP inside the sandbox (ABI 4 and up; a second
	// layer behind the network namespace).
	TCP *LandlockTCP `json:"tcp,omitempty"`
	// MinABI is the oldest Landlock ABI that enforces the whole plan, with
	// the reason for each step above 1.
	MinABI  int      `json:"minABI"`
	Reasons []string `json:"reasons,omitempty"`
}

// LandlockTCP lists the only TCP ports the command may connect to and
// bind; with AnyConnect, connect() is not limited, only bind().
type LandlockTCP struct {
	Connect    []int `json:"connect"`
	Bind       []int `json:"bind,omitempty"`
	AnyConnect bool  `json:"anyConnect,omitempty"`
}

// LandlockRule grants Access below Path.
type LandlockRule struct {
	Path   string `json:"path"`
	Access string `json:"access"`
	Kind   Kind   `json:"kind"`
	Why    string `json:"why"`
}

// Options are the inputs of NewPlan besides the policy.
type Options struct {
	Argv       []string      // the command; empty when Shell is set
	Shell      string        // a -c string
	Environ    []string      // the caller's environment
	UID, GID   int           // the caller's ids
	Degraded   string        // "refuse" or "warn"
	GlobBudget time.Duration // time allowed for matching globs against the disk
	// Disk holds the listings FindRepos read for this run, so that the
	// plan's walks do not read the same tree again; nil reads afresh.
	Disk *Disk
	// FenceBinary is the running fence binary, its links resolved: bound
	// into the private /tmp when it lies there (see fenceBinaryBind).
	FenceBinary string
	// SSHProxy lets git reach ssh remotes through fence's SOCKS proxy,
	// with FenceBinary as ssh's ProxyCommand (see sshThroughProxy).
	SSHProxy bool
	// Limits, when set, are the run's limits in place of the policy's:
	// the policy's tightened by the flags, with the sizes of the private
	// /tmp and /dev/shm fixed (fence's defaults are shares of memory).
	Limits *policy.RunLimits
	// Forwards expose ports of the sandbox's loopback on the host (-p).
	Forwards []Forward
	// KeepFDs are fence's descriptors the command gets (--keep-fd).
	KeepFDs []int
	// Monitor reports refused connections as they happen (--monitor).
	Monitor bool
	// Seccomp describes the backend's system call filter, for the plan's
	// readers.
	Seccomp []string
	// LandlockOnly derives the Landlock-only engine's rules into the
	// plan (Plan.LandlockOnly): for `fence plan`, and a run that knows
	// it will need them. It costs a walk of the directories around every
	// denied path (a millisecond or two), which a run of the namespace
	// engine never needs; a run that finds out at start derives them then
	// (WithLandlockOnly).
	LandlockOnly bool
}

// DefaultGlobBudget bounds the walk that matches glob rules at start.
const DefaultGlobBudget = 250 * time.Millisecond

// NewPlan turns a compiled policy into a Plan for the current disk.
func NewPlan(p *policy.Policy, o Options) (*Plan, error) {
	argv, err := commandArgv(o)
	if err != nil {
		return nil, err
	}
	o.GlobBudget = budget(p, o)
	if o.Disk == nil {
		o.Disk = NewDisk()
	}
	for _, w := range p.Write {
		if w.Pattern == "/" {
			return nil, fmt.Errorf("%s: fence cannot make the whole root writable (it would bury the sandbox's own /tmp, /dev and /proc); name the directories, or run with --mode full", w.Origin)
		}
	}
	degraded := o.Degraded
	if degraded == "" {
		degraded = "refuse"
	}
	env, removed := SanitizeEnv(o.Environ, p.EnvDeny, p.EnvAllow)
	if slices.ContainsFunc(p.CommandDeny, func(r policy.CommandRule) bool { return len(r.Tokens) > 1 && r.Tokens[0] == "git" }) {
		env = GitAutocorrectOff(env)
	}
	plan := &Plan{
		Argv: argv, Dir: p.Dir, Env: env, EnvRemoved: removed,
		UID: o.UID, GID: o.GID, Network: "none", Degraded: degraded,
		Limits: p.Limits, NewSession: p.ForceNewSession,
		KeepFDs: o.KeepFDs, Monitor: o.Monitor, Seccomp: o.Seccomp, Rules: rulesOf(p),
	}
	if o.Limits != nil {
		plan.Limits = *o.Limits
	}
	plan.Proxy = &Proxy{HTTPPort: p.HTTPProxyPort, SOCKSPort: p.SocksProxyPort, AllowedDomains: p.AllowedDomains, DeniedDomains: p.DeniedDomains, SSH: p.SSH, AllowPrivateAddresses: p.AllowPrivateAddresses,
		RefusalSummary: p.RefusalSummary, NoNetwork: p.NoNetwork, Upstream: p.Upstream}
	if p.HostNetwork {
		// The proxies listen on the host's loopback, at ports the
		// supervisor picks when it starts them (see ProxyEnv).
		plan.Network = "host"
		plan.Proxy.HTTPPort, plan.Proxy.SOCKSPort = 0, 0
	} else {
		plan.Proxy.LocalPorts = p.LocalOutboundPorts
		plan.Env = ProxyEnv(plan.Env, plan.Proxy.HTTPPort, plan.Proxy.SOCKSPort)
	}
	if err := plan.addForwards(o.Forwards); err != nil {
		return nil, err
	}
	b := builder{plan: plan, pol: p, m: &matcher{deadline: time.Now().Add(o.GlobBudget), disk: o.Disk}, environ: o.Environ, fenceBinary: o.FenceBinary}
	b.m.deny = map[string]bool{}
	for _, r := range slices.Concat(p.DenyRead, p.DenyWrite) {
		b.m.deny[globKey(r)] = true
	}
	b.m.prepare(slices.Concat(p.DenyRead, p.DenyWrite, p.Write, p.Read, p.Execute))
	b.build()
	if b.err != nil {
		return nil, b.err
	}
	fixTempEnv(plan, p, o.UID)
	if o.SSHProxy {
		sshThroughProxy(plan, o.FenceBinary)
	}
	if o.LandlockOnly {
		plan.LandlockOnly = landlockOnly(plan)
	}
	plan.Worktrees = worktreeWatches(o.Disk)
	plan.Gitlinks = gitlinkWatches(o.Disk)
	// Parents first: a created directory is moved aside whole, before
	// anything fence watches inside it.
	sortByDepth(plan.Watch, func(w Watch) string { return w.Path })
	if err := b.m.unfinishedDeny(p, o.GlobBudget); err != nil {
		return nil, err
	}
	plan.Globs = b.m.reports
	for _, g := range plan.Globs {
		if g.Cut {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("the %s time budget ran out while matching %s: the paths it did not reach get no access from it", o.GlobBudget, g.Rule))
		}
	}
	return plan, nil
}

// commandArgv is the argv to run: the user's, or a shell for -c.
func commandArgv(o Options) ([]string, error) {
	switch {
	case o.Shell != "" && len(o.Argv) > 0:
		return nil, fmt.Errorf("give either -c 'shell string' or a command, not both")
	case o.Shell != "":
		return []string{shellPath(), "-c", o.Shell}, nil
	case len(o.Argv) == 0:
		return nil, fmt.Errorf("no command given")
	}
	return o.Argv, nil
}

func shellPath() string {
	for _, sh := range []string{"/bin/bash", "/usr/bin/bash", "/bin/sh"} {
		if _, err := inputs.Stat(sh); err == nil {
			return sh
		}
	}
	return "/bin/sh"
}

type builder struct {
	plan    *Plan
	pol     *policy.Policy
	m       *matcher
	environ []string
	// fenceBinary is Options.FenceBinary.
	fenceBinary string
	err         error      // what kept the plan from being complete
	scope       *linkScope // see linkScope; computed when first needed
	pins        []string   // more directories to pin, see watchLinks
}

// paths are the existing paths r names, resolved; with trees, a path
// through a link out of its tree is dropped with a warning.
func (b *builder) paths(r policy.Rule, scope *linkScope) []string {
	if scope == nil {
		return b.m.existing(r)
	}
	var out []string
	for _, p := range b.m.matches(r) {
		real, err := guardedResolve(p, *scope)
		if err != nil {
			b.plan.Warnings = append(b.plan.Warnings, fmt.Sprintf("%s: %v", r.Origin, err))
			continue
		}
		out = append(out, real)
	}
	return out
}

// resolved is an existing path a rule names, after symlinks.
type resolved struct {
	path   string
	kind   Kind
	why    string
	dir    bool
	socket bool // a host unix socket (see hiddenSockets)
}

// outOfReach reports whether a write protection fence always adds
// concerns a path no writable tree holds or lies in, with no link on its
// way: read-only already, it needs no mount, and the command cannot
// create it, so it needs no watch either. Most of the routine files are
// such paths when the home is not writable; skipping them is most of
// the protections' start-up cost.
func (b *builder) outOfReach(r policy.Rule, write []resolved) bool {
	if !strings.HasPrefix(r.Key, "mandatory.") || r.Glob {
		return false
	}
	dir := path.Dir(r.Pattern)
	if b.m.disk.canonical(dir) != dir {
		return false // a link on the way: where it leads is not known yet
	}
	if e, ok := b.m.disk.lookup(r.Pattern); ok && e.Type()&fs.ModeSymlink != 0 {
		return false // a link itself, which may lead into a writable tree
	}
	return !slices.ContainsFunc(write, func(w resolved) bool { return under(r.Pattern, w.path) || under(w.path, r.Pattern) })
}

// all resolves what deny rules name: a link leads to what is protected.
func (b *builder) all(rules []policy.Rule) []resolved { return b.resolve(rules, nil) }

// allowed resolves what allow rules name, granting nothing through a
// symlink that leads out of the writable tree it lies in.
func (b *builder) allowed(rules []policy.Rule) []resolved {
	return b.resolve(rules, b.linkScope())
}

// linkScope is the run's linkScope, computed when first needed.
func (b *builder) linkScope() *linkScope {
	if b.scope == nil {
		s := b.m.disk.linkScope(b.pol)
		b.scope = &s
	}
	return b.scope
}

// resolve finds the existing paths of rules with their links resolved;
// with trees, guarded as guardedResolve does.
func (b *builder) resolve(rules []policy.Rule, scope *linkScope) []resolved {
	var out []resolved
	for _, r := range rules {
		found := 0
		for _, p := range b.paths(r, scope) {
			e, ok := b.m.disk.lookup(p)
			if !ok || e.Type()&fs.ModeSymlink != 0 {
				continue // gone, or a link that leads nowhere
			}
			kind := KindRule
			if r.Key == policy.KeyPlanCache {
				kind = KindPlanCache
			}
			out = append(out, resolved{path: p, kind: kind, why: r.Origin, dir: e.IsDir()})
			found++
		}
		switch {
		case !strings.HasPrefix(r.Key, "mandatory."):
		case r.Glob:
			b.watchGlob(r)
		case found > 0:
		case r.Key == policy.KeyPlanCache:
			// Missing, it is not watched: fence trusts nothing it finds
			// in its cache, and one made by the command is its own.
		default:
			// Where it leads, canonical, so that the after-run check can
			// walk it without following a link the command planted: for
			// a protected link whose target is missing, the target.
			p := b.m.disk.landing(r.Pattern)
			b.plan.Watch = append(b.plan.Watch, Watch{Path: p, Quarantine: policy.Quarantined(r.Key), Kind: KindMissing, Why: r.Origin, Missing: b.m.disk.firstMissing(p)})
		}
	}
	return out
}

// watchLinks watches every symlink on the way to a path fence always
// protects that lies in a tree the command may write (~/.bashrc linked
// into a dotfiles repository, ~/.config linked elsewhere, a link to a
// link): the mounts cover what the links lead to, not the links, which
// the command could replace; fence puts them back after the run, and
// pins their directories so that none can be moved away.
func (b *builder) watchLinks(write []resolved) {
	seen := map[string]bool{}
	for _, r := range slices.Concat(b.pol.DenyWrite, b.pol.DenyRead) {
		// The plan cache's links are not put back: fence makes nothing
		// through a link there and follows none below the cache dir.
		if !strings.HasPrefix(r.Key, "mandatory.") || r.Glob || r.Key == policy.KeyPlanCache || b.outOfReach(r, write) {
			continue
		}
		for _, l := range b.m.disk.linksTo(r.Pattern) {
			if seen[l.path] || !coveredBy(path.Dir(l.path), write) {
				continue
			}
			seen[l.path] = true
			if l.up {
				b.pins = append(b.pins, l.path)
				continue
			}
			b.plan.Watch = append(b.plan.Watch, Watch{Path: l.path, Quarantine: policy.Quarantined(r.Key), Kind: KindLink, Why: r.Origin, Link: l.target})
		}
	}
}

// linksTo returns the symlinks met in resolving p, each at its canonical
// place, with what it says; what the walk to p's directory found is
// remembered, since the protected paths share a few directories.
func (d *Disk) linksTo(p string) []linkSeen {
	dir := path.Dir(p)
	w, ok := d.walked[dir]
	if !ok {
		w.links, w.real = d.linksFrom("/", dir)
		if d.walked == nil {
			d.walked = map[string]walkedDir{}
		}
		d.walked[dir] = w
	}
	if w.real == "" {
		return w.links // a link on the way that cannot be read, or a loop
	}
	last, _ := d.linksFrom(w.real, path.Base(p))
	return append(slices.Clip(w.links), last...)
}

type walkedDir struct {
	links []linkSeen
	real  string
}

// linksFrom resolves rel from the canonical directory start, returning
// the links met and where it ends ("" when a link could not be read or
// the links loop).
func (d *Disk) linksFrom(start, rel string) ([]linkSeen, string) {
	var out []linkSeen
	end, _ := d.resolveLinks(start, rel, func(dir string) {
		out = append(out, linkSeen{path: dir, up: true})
	}, func(l linkSeen, _, _ string) error {
		out = append(out, l)
		return nil
	})
	return out, end
}

// watchGlob watches a glob fence always protects (a user site-packages
// for any Python version): a match the command creates is moved aside
// after the run, as a missing plain path is.
func (b *builder) watchGlob(r policy.Rule) {
	base := literalPrefix(r.Pattern)
	real := b.m.disk.canonical(base)
	w := Watch{Path: real + strings.TrimPrefix(r.Pattern, base), Glob: true, Quarantine: policy.Quarantined(r.Key), Kind: KindGlob, Why: r.Origin}
	for _, m := range b.m.matches(r) {
		w.Existing = append(w.Existing, real+strings.TrimPrefix(m, base))
	}
	b.plan.Watch = append(b.plan.Watch, w)
}

func (b *builder) build() {
	write := b.allowed(b.pol.Write)
	denyRead := b.all(b.pol.DenyRead)
	denyWrite := b.all(slices.DeleteFunc(slices.Clone(b.pol.DenyWrite), func(r policy.Rule) bool { return b.outOfReach(r, write) }))
	write = slices.DeleteFunc(write, func(w resolved) bool { return coveredBy(w.path, denyWrite) || coveredBy(w.path, denyRead) })
	read := b.allowed(b.pol.Read)
	exec := b.allowed(b.pol.Execute)

	mounts := &b.plan.Mounts
	mounts.Devices = b.pol.DeviceMode
	mounts.DevAllow = b.pol.DeviceAllow
	mounts.PrivateTmp = true
	for _, w := range write {
		mounts.Binds = append(mounts.Binds, Bind{Path: w.path, Write: true, Kind: w.kind, Why: w.why})
	}
	// The private /tmp hides the host's; what the policy names there is
	// bound through, read-only unless it is writable.
	dir := resolved{path: b.realDir(), kind: KindWorkDir, why: "the working directory", dir: true}
	for _, r := range append(append([]resolved{dir}, read...), exec...) {
		if under(r.path, "/tmp") && !coveredBy(r.path, write) && !coveredBy(r.path, denyRead) {
			mounts.Binds = append(mounts.Binds, Bind{Path: r.path, Kind: r.kind, Why: r.why})
		}
	}
	for _, d := range denyWrite {
		if coveredBy(d.path, write) {
			mounts.Binds = append(mounts.Binds, Bind{Path: d.path, Kind: d.kind, Why: d.why})
		}
	}
	mounts.Binds = b.fenceBinaryBind(mounts.Binds)
	mounts.Binds = dedupeBinds(mounts.Binds)
	sortByDepth(mounts.Binds, func(x Bind) string { return x.Path })
	mounts.Links = b.tmpLinks(mounts.Binds)
	sockets := b.hiddenSockets()
	denyRead = append(denyRead, sockets...)
	sortByDepth(denyRead, func(r resolved) string { return r.path })
	for _, d := range denyRead {
		// Below /tmp, a denied path is hidden already unless a bind brings
		// it, or something below it, into the private /tmp.
		hidden := under(d.path, "/tmp") && !slices.ContainsFunc(mounts.Binds, func(x Bind) bool { return under(d.path, x.Path) || under(x.Path, d.path) })
		if !hidden && !slices.ContainsFunc(mounts.Masks, func(m Mask) bool { return under(d.path, m.Path) }) {
			mounts.Masks = append(mounts.Masks, Mask{Path: d.path, Dir: d.dir, Socket: d.socket, Kind: d.kind, Why: d.why})
		}
	}
	b.programs()
	if b.pol.RuntimeExec == "argv" {
		rules := b.pol.CommandRules()
		b.plan.ExecRules, b.plan.ExecArgv = &rules, true
	} else {
		b.execDenies()
	}
	sortByDepth(mounts.Masks, func(x Mask) string { return x.Path })
	b.watchLinks(write)
	pinAncestors(mounts, b.plan.Watch, b.pins)
	b.landlock(read, exec, write)
}

// hiddenSockets are the host's unix sockets the policy does not list:
// Landlock before ABI 9 cannot refuse connect() on a pathname socket,
// so each is masked.
func (b *builder) hiddenSockets() []resolved {
	if b.pol.AllUnixSockets {
		return nil
	}
	allowed := slices.Clone(b.pol.UnixSockets)
	for _, r := range b.pol.UnixSockets {
		base := literalPrefix(r.Pattern)
		if real := b.m.disk.canonical(base); real != base {
			allowed = append(allowed, policy.Rule{Pattern: real + strings.TrimPrefix(r.Pattern, base)})
		}
	}
	socks, err := FindHostSockets(b.environ, b.m.disk.Sockets())
	if err != nil {
		b.err = err
		return nil
	}
	socks = slices.DeleteFunc(socks, func(s string) bool { return allowedSocket(s, allowed) })
	if len(socks) > MaxHiddenSockets {
		b.err = tooManySockets(socks)
		return nil
	}
	b.plan.HostSockets = socks
	var out []resolved
	for _, sock := range socks {
		out = append(out, resolved{path: sock, socket: true, kind: KindHostSocket, why: "a host unix socket network.allowUnixSockets does not list"})
	}
	return out
}

// pinAncestors binds every directory on the way from a writable bind down
// to a path it protects (a mask or a read-only bind inside it) onto
// itself. A mount lives on a dentry and moves with its parent: without
// the pins, the command could rename a parent of a protected path, mount
// and all, and put a file of its own where the next run or the host
// looks. A mount point cannot be renamed or removed (EBUSY), so with every
// ancestor a mount point nothing on the way can move.
//
// The directories of watched links (see watchLinks) are pinned the same
// way: a link itself cannot be a mount point, but with its directory
// pinned it stays where fence checks it after the run.
func pinAncestors(mounts *Mounts, watch []Watch, dirs []string) {
	var protected []string
	for _, bind := range mounts.Binds {
		if !bind.Write {
			protected = append(protected, bind.Path)
		}
	}
	for _, m := range mounts.Masks {
		protected = append(protected, m.Path)
	}
	for _, w := range watch {
		if w.Link != "" {
			protected = append(protected, w.Path)
		}
	}
	// A directory a link's ".." climbs out of is pinned itself (with a
	// trailing slash, path.Dir of it is the directory).
	for _, d := range dirs {
		protected = append(protected, d+"/")
	}
	pinned := map[string]bool{}
	for _, bind := range mounts.Binds {
		pinned[bind.Path] = true
	}
	for _, p := range protected {
		outer, ok := innermostBind(mounts.Binds, p)
		if !ok || !outer.Write {
			continue // below a read-only bind or the read-only host: nothing moves
		}
		for dir := path.Dir(p); dir != outer.Path && under(dir, outer.Path); dir = path.Dir(dir) {
			if !pinned[dir] {
				pinned[dir] = true
				mounts.Binds = append(mounts.Binds, Bind{Path: dir, Write: true, Kind: KindPin, Why: "pinned: on the way to " + p + ", so that it cannot be moved away"})
			}
		}
	}
	sortByDepth(mounts.Binds, func(x Bind) string { return x.Path })
}

// innermostBind is the deepest bind that holds p, p itself excluded.
func innermostBind(binds []Bind, p string) (Bind, bool) {
	var best Bind
	found := false
	for _, bind := range binds {
		if bind.Path != p && under(p, bind.Path) && (!found || len(bind.Path) > len(best.Path)) {
			best, found = bind, true
		}
	}
	return best, found
}

// dedupeBinds keeps the first bind of each path and kind: two rules can
// name the same directory, and a tree can be mounted only once.
func dedupeBinds(binds []Bind) []Bind {
	seen := map[Bind]bool{}
	return slices.DeleteFunc(binds, func(b Bind) bool {
		key := Bind{Path: b.Path, Write: b.Write}
		if seen[key] {
			return true
		}
		seen[key] = true
		return false
	})
}

// coveredBy reports whether p is one of rs or below one of them.
func coveredBy(p string, rs []resolved) bool {
	return slices.ContainsFunc(rs, func(r resolved) bool { return under(p, r.path) })
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// sortByDepth orders paths parents first, and by name among equals, so
// that a mount never hides one made before it and plans are stable.
func sortByDepth[T any](xs []T, pathOf func(T) string) {
	type keyed struct {
		depth, i int
		path     string
	}
	ks := make([]keyed, len(xs))
	for i, x := range xs {
		p := path.Clean(pathOf(x))
		ks[i] = keyed{strings.Count(p, "/"), i, p}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if d := a.depth - b.depth; d != 0 {
			return d
		}
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return a.i - b.i // stable
	})
	sorted := make([]T, len(xs))
	for j, k := range ks {
		sorted[j] = xs[k.i]
	}
	copy(xs, sorted)
}

func (b *builder) landlock(read, exec, write []resolved) {
	ll := &b.plan.Landlock
	add := func(p, access string, kind Kind, why string) {
		ll.Rules = append(ll.Rules, LandlockRule{Path: p, Access: access, Kind: kind, Why: why})
	}
	if b.pol.ReadMode == policy.ReadOpen {
		add("/", "read", KindOpenReads, "reads are open (no defaultDenyRead)")
	}
	for _, r := range read {
		add(r.path, "read", r.kind, r.why)
	}
	for _, r := range exec {
		add(r.path, "exec", r.kind, r.why)
	}
	for _, w := range write {
		add(w.path, "write", w.kind, w.why)
	}
	if b.plan.Mounts.PrivateTmp && !coveredBy("/tmp", write) {
		add("/tmp", "write", KindPrivateTmp, "the private /tmp")
	}
	add("/dev", "dev", KindDevices, "device nodes of the sandbox's /dev")
	if b.pol.AllUnixSockets {
		add("/", "unix", KindAllUnixSockets, "network.allowAllUnixSockets")
	}
	for _, s := range b.allowed(b.pol.UnixSockets) {
		add(s.path, "unix", s.kind, s.why)
	}
	ll.TCP = b.landlockTCP()
	ll.MinABI = 1
	if b.plan.Network == "host" {
		ll.MinABI = 6
		ll.Reasons = append(ll.Reasons, "ABI 6 scopes abstract unix sockets, which the host network would otherwise expose")
	}
}
