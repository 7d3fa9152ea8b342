package sandbox

import (
	"io/fs"
	"os"
	"path"
	"slices"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// Weaker lists what a Landlock-only sandbox does not enforce that the
// namespace sandbox does, for a filtered network and the minimal /dev:
// what `fence doctor` says of this engine. WeakerFor says it of a plan.
var Weaker = WeakerFor(&Plan{Network: "none", Mounts: Mounts{Devices: "minimal"}}, false)

// WeakerFor lists what the Landlock-only sandbox does not enforce of
// plan that the namespace sandbox does, for the warning fence prints when
// it falls back (and the refusal, without --degraded=warn); root adds
// WeakerRoot. Each line says what an attempt achieves, so that tests can
// hold it to that.
func WeakerFor(plan *Plan, root bool) []string {
	out := []string{
		"no mount namespace: directories on the way to a denied path cannot be listed, and new files cannot be created directly in them",
		"no private /tmp: TMPDIR points to a private directory in the host's /tmp instead, with no size limit beyond --limit-fsize per file (limits.tmpSizeMB and shmSizeMB do not apply); the rest of the host's /tmp is readable wherever the policy lets the command read",
		"no pid namespace: host processes are visible in /proc (their command lines among the rest, not their environment, memory or open files), and the seccomp filter refuses changing the limits, priority, CPU affinity or scheduling of any process but the caller (prlimit, setpriority, ioprio_set and sched_set* with another pid fail with EPERM); daemons the command starts are killed when it ends (or times out), fence being their subreaper, but not when fence itself is killed with SIGKILL",
		"no read-only host: Landlock does not cover file modes, owners or extended attributes, so the seccomp filter refuses setuid and setgid bits (by chmod and when creating a file; openat2 fails with ENOSYS), a world-writable chmod, and every change to extended attributes and ACLs (EOPNOTSUPP); other mode changes to the user's own files outside the policy (chmod 644 ~/.ssh/id_rsa, chmod +x on a hook git ignores for lack of it) and their timestamps are not refused",
		"no ipc namespace: System V IPC and POSIX message queues are the host's, so their calls fail with EPERM",
		"no read-only plan cache: where the policy lets the command write the user cache dir (~/.cache), it can write fence's plan cache there too ($XDG_CACHE_HOME/fence), since Landlock cannot keep a directory read-only inside a writable one without keeping new files out of that one; what it leaves there costs later runs their cached plans, not their safety: fence opens the cache without following links, only through directories of this user's that others cannot write, takes only entries sealed with a key the command cannot read, and removes only its own entries' regular files",
	}
	if plan.Network == "none" {
		out = append(out, "no network namespace: fence judges every connect(), and TCP reaches only its proxies on 127.0.0.1 and the ports of allowLocalOutboundPorts on 127.0.0.1 and ::1 (anything else fails with EACCES, and fence names it); UDP, ICMP, raw, SCTP and MPTCP sockets, every family but unix and netlink route, and TCP Fast Open fail with EACCES (names resolve through the proxies only); nothing may listen on TCP, nor on an abstract unix name, which is the host's (bind and listen fail with EACCES; a unix socket with no name gets a random one)")
	} else {
		out = append(out, "no network namespace: the host's network, as the policy asks")
	}
	out = append(out, "no mount masks: fence judges every connect() to a unix socket: one network.allowUnixSockets does not list is refused (EACCES) if it is one of the host's sockets fence found at start, by any path or link to it, and otherwise unless fence put it to listen for the sandbox (every listen() of the sandbox goes through fence), as is an abstract one: a host socket bound since the start is refused before any connection is made; unix datagram and raw sockets cannot be created, by socket or socketpair (EACCES: syslog(3) and sd_notify fail quietly)")
	if !root {
		out = append(out, "connect() judged by fence: a process that makes itself non-dumpable (ssh does, before it connects to an agent) cannot connect at all (nor listen, with a filtered network: EACCES), since fence cannot read its memory without root")
	}
	if plan.Mounts.Devices == "host" {
		out = append(out, "no private /dev: the host's, as the policy asks (devices \"host\"), with every terminal and the host's /dev/shm")
	} else {
		out = append(out, "no private /dev: the command gets the host's null, zero, full, random, urandom and tty devices and fence's own terminal, but no other terminal and no new pseudo-terminal (/dev/pts holds the host's other sessions: opening /dev/ptmx fails with EACCES, and script, tmux, expect and Python's pty fail), and no /dev/shm (shm_open, sem_open and Python multiprocessing's locks fail with EACCES)")
	}
	if root {
		out = append(out, WeakerRoot)
	}
	return out
}

// WeakerRoot is what the Landlock-only sandbox refuses a command that
// runs as root, who owns every system file: the warning adds it to Weaker.
const WeakerRoot = "as root: chmod and chown fail with \"Operation not permitted\" everywhere, the workspace included (chmod +x, tar x, cp -p, install, npm or pip installing scripts), since nothing else would keep root from changing the modes and owners of system files; run as a normal user, or where user namespaces are available, to have them"

// LandlockOnlyPlan is how the Landlock-only engine enforces a plan, on a
// system where fence cannot create user namespaces: NewPlan derives it
// from the plan's rules, and the run puts in what it chooses (see
// Runtime.Plan). A deny inside an allowed tree is expressed by granting
// the tree's other entries, so that the denied path gets no rule at all.
// A private directory the command may write, made at run time, stands in
// for the private /tmp: the rule of Kind KindPrivateTmpDir, whose path
// here is TmpDirPlaceholder. The only terminals of /dev/pts the command
// may use are fence's own, added at run time.
type LandlockOnlyPlan struct {
	Rules []LandlockRule `json:"rules"`
	// Masks are the host's sockets (Plan.HostSockets) that the plan's
	// "unix" rules do not grant, for the supervisor, which judges
	// connect(): Landlock before ABI 9 cannot refuse them, the host's
	// /tmp (where the namespace sandbox's private one hides them) is the
	// command's, and carving around them would take the rule off their
	// directories.
	Masks   []Mask   `json:"masks,omitempty"`
	MinABI  int      `json:"minABI"`
	Reasons []string `json:"reasons,omitempty"`
}

// WithLandlockOnly is plan with its LandlockOnly section, derived now if
// NewPlan did not (Options.LandlockOnly): a new value, plan unchanged.
func WithLandlockOnly(plan *Plan) *Plan {
	if plan.LandlockOnly != nil {
		return plan
	}
	p := *plan
	p.LandlockOnly = landlockOnly(plan)
	return &p
}

// TmpDirPlaceholder is the path of the Landlock-only engine's private
// TMPDIR in a plan: the run makes the directory and puts its path there.
const TmpDirPlaceholder = "<private TMPDIR>"

// landlockOnly derives the plan's LandlockOnlyPlan from its mounts and
// Landlock rules, which NewPlan made from the policy's.
func landlockOnly(plan *Plan) *LandlockOnlyPlan {
	out := &LandlockOnlyPlan{MinABI: 6, Reasons: append(slices.Clone(plan.Landlock.Reasons),
		"without namespaces, ABI 3 is needed to control truncation and ABI 6 to keep signals and abstract unix sockets inside the sandbox")}
	var deniedRead, deniedWrite []string
	for _, m := range plan.Mounts.Masks {
		if !m.Socket && !isSocket(m.Path) {
			deniedRead = append(deniedRead, m.Path)
		}
	}
	for _, s := range plan.HostSockets {
		if !slices.ContainsFunc(plan.Landlock.Rules, func(r LandlockRule) bool { return r.Access == "unix" && under(s, r.Path) }) {
			out.Masks = append(out.Masks, Mask{Path: s, Socket: true, Kind: KindHostSocket, Why: "a host unix socket network.allowUnixSockets does not list"})
		}
	}
	deniedWrite = slices.Clone(deniedRead)
	for _, b := range plan.Mounts.Binds {
		if !b.Write && b.Kind != KindPlanCache {
			deniedWrite = append(deniedWrite, b.Path)
		}
	}
	// The host's /dev holds every terminal and /dev/shm: no rule for the
	// rest of the file system (reads open on "/", say) reaches into it,
	// and only landlockDevices are granted there.
	outOfDev := func(denied []string) []string {
		if plan.Mounts.Devices == "host" {
			return denied
		}
		return append(slices.Clip(denied), "/dev")
	}
	for _, r := range plan.Landlock.Rules {
		denied := outOfDev(deniedRead)
		switch {
		case r.Path == "/dev" || r.Kind == KindPrivateTmp:
			continue
		case r.Access == "write":
			denied = outOfDev(deniedWrite)
		}
		for _, g := range carve(r.Path, denied) {
			out.Rules = append(out.Rules, LandlockRule{Path: g, Access: r.Access, Kind: r.Kind, Why: r.Why})
		}
	}
	out.Rules = append(out.Rules, LandlockRule{Path: TmpDirPlaceholder, Access: "write", Kind: KindPrivateTmpDir, Why: "the private TMPDIR"})
	for _, d := range landlockDevices(plan.Mounts, nil) {
		for _, g := range carve(d, deniedRead) {
			out.Rules = append(out.Rules, LandlockRule{Path: g, Access: "dev", Kind: KindDevices, Why: "device nodes"})
		}
	}
	return out
}

// rulesFor are the Landlock-only engine's rules for a run: the plan's,
// with the private TMPDIR the run made, the XDG_RUNTIME_DIR it made in a
// shared /tmp (runtimeDir; made after the plan, so that no carving of
// /tmp holds it), and its terminals, each granted unless a mask of the
// plan holds it.
func (ll *LandlockOnlyPlan) rulesFor(plan *Plan, run *LandlockOnlyRun, runtimeDir string) []LandlockRule {
	rules := slices.Clone(ll.Rules)
	for i, r := range rules {
		if r.Kind == KindPrivateTmpDir {
			rules[i].Path = run.TmpDir
		}
	}
	if runtimeDir != "" && plan.Mounts.RuntimeDirHost {
		rules = append(rules, LandlockRule{Path: runtimeDir, Access: "write", Kind: KindRuntimeDir, Why: "the private XDG_RUNTIME_DIR"})
	}
	if plan.Mounts.Devices == "host" {
		return rules // all of /dev already
	}
	for _, term := range run.Terminals {
		granted := slices.ContainsFunc(rules, func(r LandlockRule) bool { return r.Access == "dev" && r.Path == term })
		if !granted && !slices.ContainsFunc(plan.Mounts.Masks, func(m Mask) bool { return under(term, m.Path) }) {
			rules = append(rules, LandlockRule{Path: term, Access: "dev", Kind: KindDevices, Why: "device nodes: fence's terminal"})
		}
	}
	return rules
}

// landlockDevices are the device paths the Landlock-only sandbox grants:
// all of /dev for devices "host"; otherwise the harmless ones, /dev/tty
// (fence's own controlling terminal), fence's terminals and what the
// policy passes through. /dev/pts and /dev/shm are the host's: all of
// /dev/pts would be every session's terminal, and /dev/shm every
// program's shared memory. A new pseudo-terminal cannot be had without
// them: Landlock checks the open of its other end, by TIOCGPTPEER as by
// its path, against /dev/pts. A policy that passes /dev/pts through gets
// /dev/ptmx with it.
func landlockDevices(m Mounts, terminals []string) []string {
	if m.Devices == "host" {
		return []string{"/dev"}
	}
	devices := []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
	devices = append(devices, terminals...)
	devices = append(devices, m.DevAllow...)
	if slices.Contains(m.DevAllow, "/dev/pts") && !slices.Contains(m.DevAllow, "/dev/ptmx") {
		devices = append(devices, "/dev/ptmx")
	}
	slices.Sort(devices)
	return slices.Compact(devices)
}

func isSocket(p string) bool {
	fi, err := inputs.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSocket != 0
}

// carve returns paths that together grant root minus everything in denied:
// root itself when nothing denied lies below it, nothing when root is
// denied, otherwise the carving of each entry of root. Symlinks are never
// granted: a rule on a link would grant its target.
func carve(root string, denied []string) []string {
	if slices.ContainsFunc(denied, func(d string) bool { return under(root, d) }) {
		return nil
	}
	if !slices.ContainsFunc(denied, func(d string) bool { return under(d, root) }) {
		return []string{root}
	}
	entries, err := inputs.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, carve(path.Join(root, e.Name()), denied)...)
	}
	return out
}
