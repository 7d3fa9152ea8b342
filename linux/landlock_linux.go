package linux

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/fence-sandbox/fence/sandbox"
)

// Access rights of the plan's access names, out of what ABI 7 handles.
var (
	accessRead  = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSExecute)
	accessExec  = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSExecute)
	accessWrite = landlock.V9.HandledAccessFS
	// accessUnix lets the command connect to pathname unix sockets (ABI 9).
	accessUnix = landlock.AccessFSSet(ll.AccessFSResolveUnix)
	// accessFile are the rights that apply to a file (not a directory).
	accessFile = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev | ll.AccessFSResolveUnix)
)

func accessOf(name string) (landlock.AccessFSSet, error) {
	switch name {
	case "read":
		return accessRead, nil
	case "exec":
		return accessExec, nil
	case "write", "dev":
		return accessWrite, nil
	case "unix":
		return accessUnix, nil
	}
	return 0, fmt.Errorf("unknown Landlock access %q", name)
}

// KernelLandlockABI is the Landlock ABI the running kernel offers, 0 when
// Landlock is missing or disabled.
func KernelLandlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// landlockRulesetFD makes the plan's ruleset without enforcing it, for
// one thread to enter (see connectJudge); fd is -1 when there is nothing
// to enforce.
func landlockRulesetFD(plan sandbox.Landlock) (fd int, flags uint32, err error) {
	cfg, opts, err := landlockConfig(plan)
	if err != nil {
		return -1, 0, err
	}
	fd, flags, err = cfg.BestEffort().NewRulesetFD(opts...)
	if err != nil {
		return -1, 0, fmt.Errorf("landlock: %w", err)
	}
	return fd, flags, nil
}

func landlockConfig(plan sandbox.Landlock) (*landlock.Config, []landlock.Rule, error) {
	cfg, opts, err := landlockNetConfig(plan)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range plan.Rules {
		access, err := accessOf(r.Access)
		if err != nil {
			return nil, nil, err
		}
		if fi, err := os.Stat(r.Path); err == nil && !fi.IsDir() {
			access &= accessFile
		}
		opts = append(opts, landlock.PathAccess(access, r.Path).IgnoreIfMissing())
	}
	return cfg, opts, nil
}

// landlockNetConfig is the plan's Landlock configuration, the rights it
// handles and its TCP port rules, without its path rules: the supervisor
// adds those by path (landlockConfig), the sandbox child by the paths it
// opens in the new root (newLandlockLowering).
func landlockNetConfig(plan sandbox.Landlock) (*landlock.Config, []landlock.Rule, error) {
	args := []any{landlock.V9.HandledAccessFS, landlock.V7.Scoped}
	var rules []landlock.Rule
	if plan.TCP != nil {
		handled := landlock.V7.HandledAccessNet
		if plan.TCP.AnyConnect {
			handled = landlock.AccessNetSet(ll.AccessNetBindTCP)
		}
		args = append(args, handled)
		for _, port := range plan.TCP.Connect {
			rules = append(rules, landlock.ConnectTCP(uint16(port)))
		}
		for _, port := range plan.TCP.Bind {
			rules = append(rules, landlock.BindTCP(uint16(port)))
		}
	}
	cfg, err := landlock.NewConfig(args...)
	if err != nil {
		return nil, nil, fmt.Errorf("landlock config: %w", err)
	}
	return cfg, rules, nil
}
