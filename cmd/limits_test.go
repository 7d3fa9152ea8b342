package cmd

import (
	"runtime"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/linux"
	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// TestTmpfsSizes: a size flag lowers the policy's size or fence's
// default, never raises either.
func TestTmpfsSizes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sizes of /tmp and /dev/shm are the Linux sandbox's")
	}
	mem := linux.Memory{Bytes: 16 << 30, Total: 16 << 30}
	tests := []struct {
		name           string
		pol, flags     policy.RunLimits
		tmp, shm       uint64
		tmpDef, shmDef bool
	}{
		{"defaults", policy.RunLimits{}, policy.RunLimits{}, 4096, 2048, true, true},
		{"a flag below the default", policy.RunLimits{}, policy.RunLimits{TmpSizeMB: 8}, 8, 2048, false, true},
		{"a flag above the default is held to it", policy.RunLimits{}, policy.RunLimits{TmpSizeMB: 100000, ShmSizeMB: 100000}, 4096, 2048, true, true},
		{"the policy raises the default", policy.RunLimits{TmpSizeMB: 10000}, policy.RunLimits{}, 10000, 2048, false, true},
		{"a flag lowers the policy's size", policy.RunLimits{TmpSizeMB: 10000}, policy.RunLimits{TmpSizeMB: 5000}, 5000, 2048, false, true},
		{"a flag does not raise it", policy.RunLimits{TmpSizeMB: 10000, ShmSizeMB: 64}, policy.RunLimits{TmpSizeMB: 20000, ShmSizeMB: 128}, 10000, 64, false, false},
	}
	for _, tt := range tests {
		l := &limitFlags{RunLimits: tt.flags, memory: func() linux.Memory { return mem }}
		s := l.sizes(tt.pol)
		if s.TmpMB != tt.tmp || s.ShmMB != tt.shm || s.TmpDefault != tt.tmpDef || s.ShmDefault != tt.shmDef {
			t.Errorf("%s: sizes = %d MiB (default %v), %d MiB (default %v), want %d (%v), %d (%v)",
				tt.name, s.TmpMB, s.TmpDefault, s.ShmMB, s.ShmDefault, tt.tmp, tt.tmpDef, tt.shm, tt.shmDef)
		}
	}
}

// TestTmpfsNotes: -d gives the sizes, or says that /tmp or /dev/shm is
// the host's; a size set for a host's tree is a warning.
func TestTmpfsNotes(t *testing.T) {
	sharedTmp := []sandbox.Bind{{Path: "/tmp", Write: true, Why: `filesystem.allowWrite "/tmp"`}}
	set := linux.TmpfsSizes{TmpMB: 8, ShmMB: 16}
	def := linux.TmpfsSizes{TmpMB: 4096, ShmMB: 2048, TmpDefault: true, ShmDefault: true, Memory: linux.Memory{Bytes: 16 << 30, Total: 16 << 30}}
	tests := []struct {
		name   string
		mounts sandbox.Mounts
		sizes  linux.TmpfsSizes
		want   []string // "!" starts a warning
	}{
		{"private, set", sandbox.Mounts{Devices: "minimal"}, set, []string{
			"private /tmp: tmpfs of 8 MiB and 1024 inodes, from limits.tmpSizeMB or --limit-tmp; a write past it fails with ENOSPC",
			"/dev/shm: tmpfs of 16 MiB and 2048 inodes, from limits.shmSizeMB or --limit-shm; a write past it fails with ENOSPC"}},
		{"private, by default", sandbox.Mounts{Devices: "minimal"}, def, []string{
			"private /tmp: tmpfs of 4096 MiB and 524288 inodes, a quarter of MemTotal (16384 MiB; no cgroup memory limit) by default",
			"/dev/shm: tmpfs of 2048 MiB and 262144 inodes, an eighth of MemTotal (16384 MiB; no cgroup memory limit) by default"}},
		{"host trees inside /tmp", sandbox.Mounts{Devices: "minimal", Binds: []sandbox.Bind{{Path: "/tmp/work", Write: true}, {Path: "/tmp/ro"}}}, def, []string{
			"the host's trees bound writable inside it are not counted: /tmp/work$", "/dev/shm: "}},
		{"the host's, by default", sandbox.Mounts{Devices: "host", Binds: sharedTmp}, def, []string{
			`/tmp is the host's, writable (rule: filesystem.allowWrite "/tmp"): no size limit of fence's applies to it`,
			`/dev/shm is the host's (devices.mode "host"): no size limit of fence's applies to it`}},
		{"the host's, set", sandbox.Mounts{Devices: "host", Binds: sharedTmp}, set, []string{
			`!limits.tmpSizeMB and --limit-tmp do not apply: the sandbox's /tmp is the host's, writable (rule: filesystem.allowWrite "/tmp")`,
			`!limits.shmSizeMB and --limit-shm do not apply: devices.mode "host" gives the sandbox the host's /dev/shm`}},
	}
	for _, tt := range tests {
		got := tmpfsNotes(&sandbox.Plan{Mounts: tt.mounts}, tt.sizes)
		if len(got) != len(tt.want) {
			t.Errorf("%s: tmpfsNotes = %v, want %d notes", tt.name, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			warn := strings.HasPrefix(w, "!")
			w = strings.TrimPrefix(w, "!")
			text, anchored := strings.CutSuffix(w, "$")
			if got[i].warn != warn || !strings.Contains(got[i].text, text) || anchored && !strings.HasSuffix(got[i].text, text) {
				t.Errorf("%s: note %d = %+v, want %q (warning %v)", tt.name, i, got[i], text, warn)
			}
		}
	}
}
