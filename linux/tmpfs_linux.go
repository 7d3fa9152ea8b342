package linux

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/policy"
)

// Memory is what the default sizes of the sandbox's /tmp and /dev/shm
// are shares of: the machine's memory, or the memory limit of fence's
// cgroup (or of one of its ancestors) when that is lower. The pages a
// command writes to either are charged to that cgroup, so in a limited
// one a /tmp without a size ends in the OOM killer rather than ENOSPC.
type Memory struct {
	Bytes    uint64 // the lower of Total and the cgroup's limit
	Total    uint64 // MemTotal
	Cgroup   string // the cgroup whose limit is lowest ("/ci.slice", "memory:/docker/x" for v1), or ""
	CgroupMB uint64 // its limit in MiB, or 0
}

// String says what the memory is, for doctor and -d.
func (m Memory) String() string {
	switch {
	case m.Cgroup == "":
		return fmt.Sprintf("MemTotal (%d MiB; no cgroup memory limit)", m.Total>>20)
	case m.Bytes < m.Total:
		return fmt.Sprintf("the memory limit of cgroup %s (%d MiB; MemTotal %d MiB)", m.Cgroup, m.CgroupMB, m.Total>>20)
	}
	return fmt.Sprintf("MemTotal (%d MiB; the memory limit of cgroup %s is higher, %d MiB)", m.Total>>20, m.Cgroup, m.CgroupMB)
}

// Test seams: where the cgroup membership and hierarchies are read.
var (
	testOnlyProcCgroup = "/proc/self/cgroup"
	testOnlyCgroupRoot = "/sys/fs/cgroup"
)

// ReadMemory reads the machine's memory and fence's cgroup memory limit.
// It costs a sysinfo call and a few small reads (BenchmarkReadMemory).
func ReadMemory() Memory {
	var si unix.Sysinfo_t
	m := Memory{}
	if unix.Sysinfo(&si) == nil {
		m.Total = uint64(si.Totalram) * uint64(si.Unit)
	}
	m.Bytes = m.Total
	var buf [4096]byte
	h, ok := memoryHierarchy(string(readSmall(testOnlyProcCgroup, buf[:])))
	if !ok {
		return m
	}
	name, limit := h.lowestLimit()
	if limit == 0 {
		return m
	}
	m.Cgroup, m.CgroupMB = name, limit>>20
	if m.Total == 0 || limit < m.Total {
		m.Bytes = limit
	}
	return m
}

// hierarchy is fence's cgroup in the hierarchy of the memory controller.
type hierarchy struct {
	dir    string   // fence's cgroup, as /proc/self/cgroup names it
	bases  []string // where the hierarchy may be mounted
	file   string   // the limit's file in each cgroup
	prefix string   // "memory:" for v1
}

// memoryHierarchy finds it in /proc/self/cgroup: v1's memory hierarchy
// ("4:memory:/path") when there is one, since the controller is then
// not in v2's, else v2's ("0::/path"), mounted at the cgroup root or
// beside v1 at its unified directory.
func memoryHierarchy(procCgroup string) (hierarchy, bool) {
	v2 := ""
	for line := range strings.Lines(procCgroup) {
		_, rest, _ := strings.Cut(strings.TrimSpace(line), ":")
		controllers, dir, ok := strings.Cut(rest, ":")
		switch {
		case !ok || !path.IsAbs(dir):
		case strings.Contains(","+controllers+",", ",memory,"):
			return hierarchy{dir, []string{testOnlyCgroupRoot + "/memory"}, "memory.limit_in_bytes", "memory:"}, true
		case controllers == "":
			v2 = dir
		}
	}
	return hierarchy{v2, []string{testOnlyCgroupRoot, testOnlyCgroupRoot + "/unified"}, "memory.max", ""}, v2 != ""
}

// lowestLimit is the lowest memory limit on the way from fence's cgroup
// up to the hierarchy's root, and the cgroup that sets it; 0 for none.
func (h hierarchy) lowestLimit() (name string, limit uint64) {
	var buf [64]byte
	for _, base := range h.bases {
		for d := h.dir; ; d = path.Dir(d) {
			if v := parseLimit(readSmall(path.Join(base, d, h.file), buf[:])); v > 0 && (limit == 0 || v < limit) {
				name, limit = h.prefix+d, v
			}
			if d == "/" {
				break
			}
		}
	}
	return name, limit
}

// readSmall reads what of file fits in buf, or nothing; with raw system
// calls, which cost half of what os.ReadFile does on cgroup files.
func readSmall(file string, buf []byte) []byte {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// parseLimit reads a cgroup memory limit: a number of bytes, or "max"
// (v2) or a huge number (v1) for none, which are 0.
func parseLimit(b []byte) uint64 {
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v >= 1<<62 {
		return 0
	}
	return v
}

// TmpfsSizes are the sizes, in MiB, of the sandbox's /tmp and /dev/shm:
// each the limit where one is set, else fence's default share of Memory.
type TmpfsSizes struct {
	TmpMB, ShmMB           uint64
	TmpDefault, ShmDefault bool   // which of them are the default share
	Memory                 Memory // read only when one is
}

// SizeTmpfs works out the sizes of /tmp and /dev/shm for l, reading the
// memory only when one of them is left to the default.
func SizeTmpfs(l policy.RunLimits) TmpfsSizes {
	var mem Memory
	if l.TmpSizeMB == 0 || l.ShmSizeMB == 0 {
		mem = ReadMemory()
	}
	return TmpfsSizesOf(l, mem)
}

// TmpfsSizesOf works out the sizes of /tmp and /dev/shm for l, the
// defaults as shares of mem.
func TmpfsSizesOf(l policy.RunLimits, mem Memory) TmpfsSizes {
	s := TmpfsSizes{TmpMB: l.TmpSizeMB, ShmMB: l.ShmSizeMB, TmpDefault: l.TmpSizeMB == 0, ShmDefault: l.ShmSizeMB == 0}
	if s.TmpDefault || s.ShmDefault {
		s.Memory = mem
		tmp, shm := policy.TmpfsDefaults(mem.Bytes)
		if s.TmpDefault {
			s.TmpMB = tmp
		}
		if s.ShmDefault {
			s.ShmMB = shm
		}
	}
	return s
}

// tmpfsData is the mount data of a memory-backed tree of sizeMB MiB: its
// size, and an inode limit in proportion (policy.TmpfsInodes), since a
// tree of empty files takes kernel memory that no size counts.
func tmpfsData(mode string, sizeMB uint64) string {
	return fmt.Sprintf("mode=%s,size=%dm,nr_inodes=%d", mode, sizeMB, policy.TmpfsInodes(sizeMB))
}
