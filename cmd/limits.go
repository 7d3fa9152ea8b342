package cmd

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/linux"
	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// limitFlags are the limits for one run; each can only tighten what the
// policy's limits section says.
type limitFlags struct {
	policy.RunLimits
	// memory is what the default sizes of /tmp and /dev/shm are shares
	// of, read while fence loads the policy and plans (see check).
	memory func() linux.Memory
}

func (l *limitFlags) register(f *pflag.FlagSet) {
	f.DurationVar(&l.Timeout, "timeout", 0, "end the whole sandbox after `DURATION` (\"30s\", \"10m\"); fence exits 124")
	f.Uint64Var(&l.CPUSeconds, "limit-cpu", 0, "CPU `SECONDS` per process")
	f.Uint64Var(&l.AddressSpaceMB, "limit-as", 0, "virtual memory per process, in `MiB`")
	f.Uint64Var(&l.FileSizeMB, "limit-fsize", 0, "largest file a process may write, in `MiB`")
	f.Uint64Var(&l.OpenFiles, "limit-nofile", 0, "open descriptors per process (`N` at least 16)")
	f.Uint64Var(&l.Processes, "limit-nproc", 0, "processes of the user inside the sandbox (`N`; not enforced for root)")
	f.Uint64Var(&l.TmpSizeMB, "limit-tmp", 0, "size of the sandbox's private /tmp, in `MiB` (default a quarter of memory)")
	f.Uint64Var(&l.ShmSizeMB, "limit-shm", 0, "size of the sandbox's /dev/shm, in `MiB` (default an eighth of memory)")
}

// check refuses limits no run could start with. It also starts reading
// the memory the default sizes of /tmp and /dev/shm are shares of, which
// apply needs once the plan is made: the reads (tens of microseconds)
// are done while fence loads the policy, and cost a run no time.
func (l *limitFlags) check() error {
	switch {
	case l.Timeout < 0:
		return fmt.Errorf("--timeout %s: want a positive duration", l.Timeout)
	case l.OpenFiles > 0 && l.OpenFiles < policy.MinOpenFiles:
		return fmt.Errorf("--limit-nofile %d: too few, want at least %d", l.OpenFiles, policy.MinOpenFiles)
	}
	if runtime.GOOS == "linux" {
		read := make(chan linux.Memory, 1)
		go func() { read <- linux.ReadMemory() }()
		l.memory = sync.OnceValue(func() linux.Memory { return <-read })
	}
	return nil
}

// planned are the run's limits: the policy's, pol, tightened with the
// flags, with the sizes of /tmp and /dev/shm the init is to mount. The
// policy's zero for them means fence's default size, not none, so a size
// flag is held to that default: it lowers a size, never raises it.
func (l *limitFlags) planned(pol policy.RunLimits) (policy.RunLimits, linux.TmpfsSizes) {
	sizes := l.sizes(pol)
	limits := pol.Tighter(l.RunLimits)
	if runtime.GOOS == "linux" {
		limits.TmpSizeMB, limits.ShmSizeMB = sizes.TmpMB, sizes.ShmMB
	}
	return limits, sizes
}

// notes warn when a size of /tmp or /dev/shm that is set cannot apply to
// plan, and with debug say what the sizes are.
func (l *limitFlags) notes(plan *sandbox.Plan, sizes linux.TmpfsSizes, debug bool, stderr io.Writer) {
	if runtime.GOOS != "linux" {
		return
	}
	for _, line := range tmpfsNotes(plan, sizes) {
		if line.warn {
			fmt.Fprintf(stderr, "fence: warning: %s\n", line.text)
		} else if debug {
			fmt.Fprintf(stderr, "fence: debug: limits: %s\n", line.text)
		}
	}
}

// sizes are the sizes of /tmp and /dev/shm under the policy's limits pol
// and the flags.
func (l *limitFlags) sizes(pol policy.RunLimits) linux.TmpfsSizes {
	var mem linux.Memory
	switch {
	case pol.TmpSizeMB > 0 && pol.ShmSizeMB > 0:
	case l.memory != nil:
		mem = l.memory()
	default:
		mem = linux.ReadMemory()
	}
	s := linux.TmpfsSizesOf(pol, mem)
	if l.TmpSizeMB > 0 && l.TmpSizeMB < s.TmpMB {
		s.TmpMB, s.TmpDefault = l.TmpSizeMB, false
	}
	if l.ShmSizeMB > 0 && l.ShmSizeMB < s.ShmMB {
		s.ShmMB, s.ShmDefault = l.ShmSizeMB, false
	}
	return s
}

type note struct {
	text string
	warn bool // said without -d too
}

// tmpfsNotes say what bounds the sandbox's /tmp and /dev/shm: their
// sizes, or that they are the host's, which no size of fence's binds (a
// warning when the policy or a flag set one).
func tmpfsNotes(plan *sandbox.Plan, s linux.TmpfsSizes) []note {
	var out []note
	tmp, tmpShared := hostTree(plan, "/tmp")
	shmShared := plan.Mounts.Devices == "host"
	switch {
	case tmpShared && !s.TmpDefault:
		out = append(out, note{fmt.Sprintf("limits.tmpSizeMB and --limit-tmp do not apply: the sandbox's /tmp is the host's, writable (rule: %s)", tmp.Why), true})
	case tmpShared:
		out = append(out, note{fmt.Sprintf("/tmp is the host's, writable (rule: %s): no size limit of fence's applies to it", tmp.Why), false})
	default:
		text := "private /tmp: " + sizeNote(s.TmpMB, s.TmpDefault, "a quarter", "limits.tmpSizeMB or --limit-tmp", s.Memory)
		if inside := hostTreesIn(plan, "/tmp"); len(inside) > 0 {
			text += "; the host's trees bound writable inside it are not counted: " + strings.Join(inside, ", ")
		}
		out = append(out, note{text, false})
	}
	switch {
	case shmShared && !s.ShmDefault:
		out = append(out, note{"limits.shmSizeMB and --limit-shm do not apply: devices.mode \"host\" gives the sandbox the host's /dev/shm", true})
	case shmShared:
		out = append(out, note{"/dev/shm is the host's (devices.mode \"host\"): no size limit of fence's applies to it", false})
	default:
		out = append(out, note{"/dev/shm: " + sizeNote(s.ShmMB, s.ShmDefault, "an eighth", "limits.shmSizeMB or --limit-shm", s.Memory), false})
	}
	return out
}
func sizeNote(mb uint64, byDefault bool, share, keys string, mem linux.Memory) string {
	from := "from " + keys
	if byDefault {
		from = share + " of " + mem.String() + " by default"
	}
	return fmt.Sprintf("tmpfs of %d MiB and %d inodes, %s; a write past it fails with ENOSPC", mb, policy.TmpfsInodes(mb), from)
}

// hostTree returns the writable bind that makes path the host's: one of
// path itself or of a directory above it.
func hostTree(plan *sandbox.Plan, path string) (sandbox.Bind, bool) {
	for _, b := range plan.Mounts.Binds {
		if b.Write && (b.Path == path || b.Path == "/" || strings.HasPrefix(path, b.Path+"/")) {
			return b, true
		}
	}
	return sandbox.Bind{}, false
}

// hostTreesIn lists the writable binds below dir.
func hostTreesIn(plan *sandbox.Plan, dir string) []string {
	var out []string
	for _, b := range plan.Mounts.Binds {
		if b.Write && strings.HasPrefix(b.Path, dir+"/") {
			out = append(out, b.Path)
		}
	}
	return out
}
