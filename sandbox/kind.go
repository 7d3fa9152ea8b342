package sandbox

// Kind says what put an entry in a plan (a bind, mask, link, Landlock
// rule or watch): code decides on it, never on Why, which says the same
// for people and may change wording. It is a stable string in JSON.
type Kind string

// The kinds of plan entries.
const (
	// KindRule: a rule of the policy, named by Why (its origin).
	KindRule Kind = "rule"
	// KindWorkDir: the working directory, bound into the private /tmp.
	KindWorkDir Kind = "workDir"
	// KindFenceBinary: the fence binary, bound into the private /tmp for
	// GIT_SSH_COMMAND.
	KindFenceBinary Kind = "fenceBinary"
	// KindPin: a directory bound onto itself so that nothing protected
	// below it can be moved away (see pinAncestors).
	KindPin Kind = "pin"
	// KindHostSocket: a host unix socket the policy does not list.
	KindHostSocket Kind = "hostSocket"
	// KindProgram: the file of a program command.deny blocks at run time.
	KindProgram Kind = "program"
	// KindTmpLink: a host symlink below /tmp made again in the private
	// /tmp.
	KindTmpLink Kind = "tmpLink"
	// KindOpenReads: reads open on "/" (no defaultDenyRead).
	KindOpenReads Kind = "openReads"
	// KindPrivateTmp: the namespace sandbox's private /tmp.
	KindPrivateTmp Kind = "privateTmp"
	// KindDevices: the device nodes of the sandbox's /dev.
	KindDevices Kind = "devices"
	// KindAllUnixSockets: network.allowAllUnixSockets.
	KindAllUnixSockets Kind = "allUnixSockets"
	// KindPlanCache: fence's plan cache, read-only (policy.KeyPlanCache).
	// The Landlock-only engine does not enforce it: a read-only subtree
	// of a writable tree would keep new files out of the tree's own
	// directory (~/.cache); fence's own handling of the cache directory
	// stands in for it there.
	KindPlanCache Kind = "planCache"
	// KindPrivateTmpDir: the Landlock-only engine's private TMPDIR.
	KindPrivateTmpDir Kind = "privateTmpDir"
	// KindRuntimeDir: the private XDG_RUNTIME_DIR a run made in the
	// host's /tmp (Runtime.RuntimeDir).
	KindRuntimeDir Kind = "runtimeDir"
	// KindMissing, KindGlob and KindLink are the kinds of watches: a
	// protected path missing at start, a protected glob, and a symlink on
	// the way to a protected path (see Watch).
	KindMissing Kind = "missing"
	KindGlob    Kind = "glob"
	KindLink    Kind = "link"
)
