package sandbox

import (
	"slices"

	"github.com/fence-sandbox/fence/policy"
)

// Rules are the policy's filesystem, socket and macOS rules as compiled,
// before the disk was looked at: what the macOS profile is compiled from
// (Seatbelt matches paths itself), kept in the plan so that every backend
// reads the plan alone. Which list a rule is in is its kind; Rule.Key
// says which of them fence always adds (policy.Rule.AlwaysProtected).
type Rules struct {
	ReadMode  policy.ReadMode `json:"readMode"`
	Read      []policy.Rule   `json:"read,omitempty"`
	Execute   []policy.Rule   `json:"execute,omitempty"`
	Write     []policy.Rule   `json:"write,omitempty"`
	DenyRead  []policy.Rule   `json:"denyRead,omitempty"`
	DenyWrite []policy.Rule   `json:"denyWrite,omitempty"`
	// UnixSockets are the host unix sockets the command may connect to;
	// AllUnixSockets allows every one.
	UnixSockets    []policy.Rule `json:"unixSockets,omitempty"`
	AllUnixSockets bool          `json:"allUnixSockets,omitempty"`
	// LocalBinding lets servers inside listen on the host's network
	// (network.allowLocalBinding true).
	LocalBinding bool `json:"localBinding,omitempty"`
	// MachLookup and MachRegister are the macOS Mach services allowed;
	// AllowPty lets the command open new pseudo-terminals there.
	MachLookup   []string `json:"machLookup,omitempty"`
	MachRegister []string `json:"machRegister,omitempty"`
	AllowPty     bool     `json:"allowPty,omitempty"`
	// RuntimeExec is command.runtimeExecPolicy, "path" or "argv".
	RuntimeExec string `json:"runtimeExec"`
	// CommandDeny are the command.deny rules, defaults included: the
	// macOS profile denies the exec of a one-word rule's binaries.
	CommandDeny []policy.CommandRule `json:"commandDeny,omitempty"`
	// SharedBinariesAccepted are binaries a one-word deny rule may not
	// block at run time (command.acceptSharedBinaryCannotRuntimeDeny).
	SharedBinariesAccepted []string `json:"sharedBinariesAccepted,omitempty"`
}

// rulesOf are p's Rules, copied: the plan shares no slice with the policy.
func rulesOf(p *policy.Policy) Rules {
	return Rules{
		ReadMode: p.ReadMode, Read: slices.Clone(p.Read), Execute: slices.Clone(p.Execute), Write: slices.Clone(p.Write),
		DenyRead: slices.Clone(p.DenyRead), DenyWrite: slices.Clone(p.DenyWrite),
		UnixSockets: slices.Clone(p.UnixSockets), AllUnixSockets: p.AllUnixSockets, LocalBinding: p.LocalBinding,
		MachLookup: slices.Clone(p.MachLookup), MachRegister: slices.Clone(p.MachRegister), AllowPty: p.AllowPty,
		RuntimeExec: p.RuntimeExec, CommandDeny: slices.Clone(p.CommandDeny),
		SharedBinariesAccepted: slices.Clone(p.SharedBinariesAccepted),
	}
}
