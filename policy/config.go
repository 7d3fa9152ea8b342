package policy

// Config is one fence.jsonc file as written, or the resolved result of
// merging a chain of them. Its JSON form is the `fence config show`
// contract: fields that are empty, false or zero are omitted, so an empty
// Config prints as {}. Nullable booleans are pointers and print when set.
//
// The json tag names double as the config keys the loader accepts; a key
// that matches no tag is an error.
type Config struct {
	Schema   string `json:"$schema,omitempty"`
	Extends  string `json:"extends,omitempty"`
	AllowPty bool   `json:"allowPty,omitempty"`
	// ForceNewSession puts the command in a session of its own, without
	// the terminal as its controlling terminal, even when it runs in the
	// foreground of one: no job control then (Linux).
	ForceNewSession bool       `json:"forceNewSession,omitempty"`
	Network         Network    `json:"network,omitzero"`
	Filesystem      Filesystem `json:"filesystem,omitzero"`
	Devices         Devices    `json:"devices,omitzero"`
	Command         Command    `json:"command,omitzero"`
	SSH             SSH        `json:"ssh,omitzero"`
	MacOS           MacOS      `json:"macos,omitzero"`
	Env             EnvVars    `json:"env,omitzero"`
	Audit           Audit      `json:"audit,omitzero"`
	Limits          Limits     `json:"limits,omitzero"`
}

// Limits bound what the command may use; zero means no limit. They are
// guards against runaway commands (a loop, a fork bomb, a disk filler),
// not a boundary a hostile command cannot reach around; see the README.
type Limits struct {
	// Timeout ends the whole sandbox after this long ("30s", "10m").
	Timeout        string `json:"timeout,omitempty"`
	CPUSeconds     int    `json:"cpuSeconds,omitempty"`     // RLIMIT_CPU, per process
	AddressSpaceMB int    `json:"addressSpaceMB,omitempty"` // RLIMIT_AS, per process
	FileSizeMB     int    `json:"fileSizeMB,omitempty"`     // RLIMIT_FSIZE: the largest file a process may write
	OpenFiles      int    `json:"openFiles,omitempty"`      // RLIMIT_NOFILE, per process
	Processes      int    `json:"processes,omitempty"`      // RLIMIT_NPROC: processes of the user in the sandbox
	// TmpSizeMB and ShmSizeMB bound the sandbox's private /tmp and
	// /dev/shm (memory-backed); zero means fence's default share of
	// memory, not unlimited.
	TmpSizeMB int `json:"tmpSizeMB,omitempty"`
	ShmSizeMB int `json:"shmSizeMB,omitempty"`
}

// Audit says where fence logs what it refuses.
type Audit struct {
	// File gets one JSON line per denial; it is rotated daily, and rotated
	// files older than seven days are removed. "~/" and relative paths are
	// expanded as path rules are.
	File string `json:"file,omitempty"`
}

// Network says which domains and local endpoints the sandbox may reach.
type Network struct {
	AllowedDomains      []string `json:"allowedDomains,omitempty"`
	DeniedDomains       []string `json:"deniedDomains,omitempty"`
	AllowUnixSockets    []string `json:"allowUnixSockets,omitempty"`
	AllowAllUnixSockets bool     `json:"allowAllUnixSockets,omitempty"`
	// AllowLocalBinding nil lets servers listen inside a private network
	// namespace, where they reach nothing of the host's, and not where the
	// host's network is shared; true lets them listen there too, false
	// nowhere.
	AllowLocalBinding *bool `json:"allowLocalBinding,omitempty"`
	// AllowLocalOutbound nil means "true when AllowLocalBinding is true".
	AllowLocalOutbound      *bool `json:"allowLocalOutbound,omitempty"`
	AllowLocalOutboundPorts []int `json:"allowLocalOutboundPorts,omitempty"`
	// AllowPrivateAddresses lists the private ranges (CIDRs such as
	// "10.20.0.0/16", or single addresses) an allowed name may resolve to.
	AllowPrivateAddresses []string `json:"allowPrivateAddresses,omitempty"`
	HTTPProxyPort         int      `json:"httpProxyPort,omitempty"`
	SocksProxyPort        int      `json:"socksProxyPort,omitempty"`
	// RefusalSummary nil means true: at exit, when the proxies refused
	// anything, fence says so in one line.
	RefusalSummary *bool `json:"refusalSummary,omitempty"`
	// DefaultAction is what becomes of a host no domain rule names:
	// "deny" (empty means deny) or "proxy", forwarded to UpstreamProxy.
	DefaultAction string `json:"defaultAction,omitempty"`
	// UpstreamProxy is an http://HOST:PORT proxy, optionally with a user
	// name and password, that defaultAction "proxy" forwards to.
	UpstreamProxy string `json:"upstreamProxy,omitempty"`
}

// Filesystem says what may be read, executed and written.
type Filesystem struct {
	AllowRead       []string `json:"allowRead,omitempty"`
	AllowExecute    []string `json:"allowExecute,omitempty"`
	DenyRead        []string `json:"denyRead,omitempty"`
	AllowWrite      []string `json:"allowWrite,omitempty"`
	DenyWrite       []string `json:"denyWrite,omitempty"`
	DefaultDenyRead bool     `json:"defaultDenyRead,omitempty"`
	// StrictDenyRead implies DefaultDenyRead and also drops the system paths.
	StrictDenyRead bool `json:"strictDenyRead,omitempty"`
	AllowGitConfig bool `json:"allowGitConfig,omitempty"`
	// WSLInterop nil means detect: on WSL (as the kernel's version string
	// says), /init, the interop binary that runs Windows programs, is
	// executable. true asks for that where the kernel is not WSL's too,
	// which fence declines with a warning; false never allows it.
	WSLInterop *bool `json:"wslInterop,omitempty"`
	// GlobBudgetMs bounds, in milliseconds, the walk that matches glob
	// rules and finds repositories at start; zero means the default. A
	// deny rule the walk could not finish makes the run refuse.
	GlobBudgetMs int `json:"globBudgetMs,omitempty"`
}

// Devices says which /dev entries exist inside the sandbox.
type Devices struct {
	// Mode is "auto", "minimal" or "host"; empty means auto.
	Mode  string   `json:"mode,omitempty"`
	Allow []string `json:"allow,omitempty"`
}

// Command holds the command-line deny and allow rules.
type Command struct {
	Deny  []string `json:"deny,omitempty"`
	Allow []string `json:"allow,omitempty"`
	// UseDefaults nil means true: the built-in deny list applies.
	UseDefaults *bool `json:"useDefaults,omitempty"`
	// Dynamic says what to do with a command preflight cannot see
	// through ($cmd, eval "$x", a string the parser cannot read): "deny",
	// or "allow" (the default).
	Dynamic string `json:"dynamic,omitempty"`
	// AcceptSharedBinaryCannotRuntimeDeny names binaries that implement
	// several commands (busybox, systemctl behind reboot): a one-word deny
	// rule for one of their commands then blocks only at preflight, since
	// blocking the binary at run time would block all of them.
	AcceptSharedBinaryCannotRuntimeDeny []string `json:"acceptSharedBinaryCannotRuntimeDeny,omitempty"`
	// RuntimeExecPolicy is how deny rules apply to what the command's
	// descendants execute: "path" (the default: one-word rules make their
	// executables non-executable) or "argv" (fence judges the argv of
	// every execve with all the rules).
	RuntimeExecPolicy string `json:"runtimeExecPolicy,omitempty"`
}

// SSH holds the rules for ssh connections made inside the sandbox.
type SSH struct {
	AllowedHosts     []string `json:"allowedHosts,omitempty"`
	DeniedHosts      []string `json:"deniedHosts,omitempty"`
	AllowedCommands  []string `json:"allowedCommands,omitempty"`
	DeniedCommands   []string `json:"deniedCommands,omitempty"`
	AllowAllCommands bool     `json:"allowAllCommands,omitempty"`
	InheritDeny      bool     `json:"inheritDeny,omitempty"`
}

// MacOS holds settings that only the Seatbelt backend uses.
type MacOS struct {
	Mach Mach `json:"mach,omitzero"`
}

// Mach lists the Mach services the sandbox may look up or register.
type Mach struct {
	Lookup   []string `json:"lookup,omitempty"`
	Register []string `json:"register,omitempty"`
}

// EnvVars says which environment variables are kept from the command.
// Deny and Allow hold names or globs such as "*_TOKEN"; Allow beats Deny.
type EnvVars struct {
	Deny  []string `json:"deny,omitempty"`
	Allow []string `json:"allow,omitempty"`
}

// MaxGlobBudgetMs is the largest filesystem.globBudgetMs.
const MaxGlobBudgetMs = 60000

// RuntimeExecModes are the accepted values of command.runtimeExecPolicy.
var RuntimeExecModes = []string{"path", "argv"}

// DynamicModes are the accepted values of command.dynamic.
var DynamicModes = []string{"allow", "deny"}

// DeviceModes are the accepted values of devices.mode.
var DeviceModes = []string{"auto", "minimal", "host"}
