//go:build linux

package linux

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// TestCgroupMemory reads memory limits from made-up cgroup trees: the
// lowest limit on the way to the root counts, "max" and v1's huge number
// are none, other controllers' lines are not read.
func TestCgroupMemory(t *testing.T) {
	tests := []struct {
		name, procCgroup string
		files            map[string]string
		cgroup           string
		mb               uint64
	}{
		{"v2, no limit", "0::/user.slice/session.scope\n", map[string]string{"user.slice/memory.max": "max\n"}, "", 0},
		{"v2, a limit above", "0::/ci.slice/job.scope\n",
			map[string]string{"ci.slice/memory.max": "1073741824\n", "ci.slice/job.scope/memory.max": "max\n"}, "/ci.slice", 1024},
		{"v2, the lowest of two", "0::/a/b\n",
			map[string]string{"a/memory.max": "1073741824\n", "a/b/memory.max": "536870912\n"}, "/a/b", 512},
		{"v2 in a cgroup namespace", "0::/\n", map[string]string{"memory.max": "268435456\n"}, "/", 256},
		{"v2 beside v1", "1:cpu:/x\n0::/x\n", map[string]string{"unified/x/memory.max": "268435456\n"}, "/x", 256},
		{"v1", "5:cpu,cpuacct:/docker/c\n4:memory:/docker/c\n0::/\n",
			map[string]string{"memory/docker/c/memory.limit_in_bytes": "2147483648\n", "cpu,cpuacct/docker/c/memory.limit_in_bytes": "1\n"}, "memory:/docker/c", 2048},
		{"v1, no limit", "4:memory:/docker/c\n", map[string]string{"memory/docker/c/memory.limit_in_bytes": "9223372036854771712\n"}, "", 0},
		{"missing files", "0::/gone\n", nil, "", 0},
		{"garbage", "nonsense\n0::relative\n", map[string]string{"memory.max": "12\n"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(dir, "cgroup", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "self"), []byte(tt.procCgroup), 0o644); err != nil {
				t.Fatal(err)
			}
			defer func(p, r string) { testOnlyProcCgroup, testOnlyCgroupRoot = p, r }(testOnlyProcCgroup, testOnlyCgroupRoot)
			testOnlyProcCgroup, testOnlyCgroupRoot = filepath.Join(dir, "self"), filepath.Join(dir, "cgroup")
			m := ReadMemory()
			if m.Cgroup != tt.cgroup || m.CgroupMB != tt.mb {
				t.Errorf("ReadMemory() cgroup %q, %d MiB, want %q, %d MiB", m.Cgroup, m.CgroupMB, tt.cgroup, tt.mb)
			}
			want := m.Total
			if tt.mb > 0 && tt.mb<<20 < want {
				want = tt.mb << 20
			}
			if m.Bytes != want || m.Total == 0 {
				t.Errorf("ReadMemory() = %d bytes of MemTotal %d, want %d", m.Bytes, m.Total, want)
			}
		})
	}
}

// TestSizeTmpfs: a size that is set is used as it is, and only a size left
// to the default reads the memory.
func TestSizeTmpfs(t *testing.T) {
	set := SizeTmpfs(policy.RunLimits{TmpSizeMB: 8, ShmSizeMB: 4})
	if set != (TmpfsSizes{TmpMB: 8, ShmMB: 4}) {
		t.Errorf("SizeTmpfs(8, 4) = %+v, want the sizes as set and no memory read", set)
	}
	def := SizeTmpfs(policy.RunLimits{ShmSizeMB: 4})
	tmp, _ := policy.TmpfsDefaults(def.Memory.Bytes)
	if def.TmpMB != tmp || !def.TmpDefault || def.ShmMB != 4 || def.ShmDefault || def.Memory.Total == 0 {
		t.Errorf("SizeTmpfs(0, 4) = %+v, want /tmp %d MiB by default and /dev/shm 4 MiB", def, tmp)
	}
}

func TestTmpfsData(t *testing.T) {
	tests := []struct {
		mb   uint64
		want string
	}{
		{8, "mode=1777,size=8m,nr_inodes=1024"},
		{4096, "mode=1777,size=4096m,nr_inodes=524288"},
	}
	for _, tt := range tests {
		if got := tmpfsData("1777", tt.mb); got != tt.want {
			t.Errorf("tmpfsData(%d) = %q, want %q", tt.mb, got, tt.want)
		}
	}
}

// BenchmarkReadMemory is what working out the default sizes adds to a
// start: sysinfo and the cgroup files of this process.
func BenchmarkReadMemory(b *testing.B) {
	for b.Loop() {
		ReadMemory()
	}
}
