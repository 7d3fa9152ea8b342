package cmd

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/policy"
)

// limitFlags are the limits for one run; each can only tighten what the
// policy's limits section says.
type limitFlags struct {
	policy.RunLimits
}

func (l *limitFlags) register(f *pflag.FlagSet) {
	f.DurationVar(&l.Timeout, "timeout", 0, "end the whole sandbox after `DURATION` (\"30s\", \"10m\"); fence exits 124")
	f.Uint64Var(&l.CPUSeconds, "limit-cpu", 0, "CPU `SECONDS` per process")
	f.Uint64Var(&l.AddressSpaceMB, "limit-as", 0, "virtual memory per process, in `MiB`")
	f.Uint64Var(&l.FileSizeMB, "limit-fsize", 0, "largest file a process may write, in `MiB`")
	f.Uint64Var(&l.OpenFiles, "limit-nofile", 0, "open descriptors per process (`N` at least 16)")
	f.Uint64Var(&l.Processes, "limit-nproc", 0, "processes of the user inside the sandbox (`N`; not enforced for root)")
}

func (l *limitFlags) check() error {
	switch {
	case l.Timeout < 0:
		return fmt.Errorf("--timeout %s: want a positive duration", l.Timeout)
	case l.OpenFiles > 0 && l.OpenFiles < policy.MinOpenFiles:
		return fmt.Errorf("--limit-nofile %d: too few, want at least %d", l.OpenFiles, policy.MinOpenFiles)
	}
	return nil
}
