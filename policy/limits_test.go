package policy

import (
	"strings"
	"testing"
)

func TestTmpfsDefaults(t *testing.T) {
	tests := []struct {
		memory   uint64
		tmp, shm uint64
	}{
		{16 << 30, 4096, 2048},
		{7 << 30, 1792, 896},
		{512 << 20, 128, 64},
		{4 << 20, 1, 1}, // at least 1 MiB each
		{0, 1, 1},
	}
	for _, tt := range tests {
		if tmp, shm := TmpfsDefaults(tt.memory); tmp != tt.tmp || shm != tt.shm {
			t.Errorf("TmpfsDefaults(%d) = %d, %d, want %d, %d", tt.memory, tmp, shm, tt.tmp, tt.shm)
		}
	}
}

func TestTmpfsInodes(t *testing.T) {
	tests := []struct{ mb, want uint64 }{
		{1, MinInodes},
		{8, MinInodes},
		{16, 2048},
		{4096, 524288},
	}
	for _, tt := range tests {
		if got := TmpfsInodes(tt.mb); got != tt.want {
			t.Errorf("TmpfsInodes(%d) = %d, want %d", tt.mb, got, tt.want)
		}
	}
}

func TestTighterTmpfs(t *testing.T) {
	tests := []struct {
		name         string
		policy, flag RunLimits
		want         RunLimits
	}{
		{"a flag sets what the policy leaves to the default", RunLimits{}, RunLimits{TmpSizeMB: 8}, RunLimits{TmpSizeMB: 8}},
		{"a flag lowers the policy's size", RunLimits{TmpSizeMB: 100, ShmSizeMB: 50}, RunLimits{TmpSizeMB: 10, ShmSizeMB: 5}, RunLimits{TmpSizeMB: 10, ShmSizeMB: 5}},
		{"a flag does not raise it", RunLimits{TmpSizeMB: 100, ShmSizeMB: 50}, RunLimits{TmpSizeMB: 1000, ShmSizeMB: 500}, RunLimits{TmpSizeMB: 100, ShmSizeMB: 50}},
		{"each on its own", RunLimits{ShmSizeMB: 50}, RunLimits{TmpSizeMB: 10}, RunLimits{TmpSizeMB: 10, ShmSizeMB: 50}},
	}
	for _, tt := range tests {
		if got := tt.policy.Tighter(tt.flag); got != tt.want {
			t.Errorf("%s: Tighter = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCheckLimitsTmpfs(t *testing.T) {
	tests := []struct {
		limits       Limits
		key, problem string
	}{
		{Limits{TmpSizeMB: 64, ShmSizeMB: 16}, "", ""},
		{Limits{TmpSizeMB: -1}, "limits.tmpSizeMB", "-1 is negative: want a positive number, or leave it out for fence's default share of memory"},
		{Limits{ShmSizeMB: -8}, "limits.shmSizeMB", "-8 is negative"},
		{Limits{CPUSeconds: -1}, "limits.cpuSeconds", "or leave it out for no limit"},
	}
	for _, tt := range tests {
		key, problem := checkLimits(tt.limits)
		if key != tt.key || !strings.Contains(problem, tt.problem) || (tt.problem == "") != (problem == "") {
			t.Errorf("checkLimits(%+v) = %q, %q, want %q, %q", tt.limits, key, problem, tt.key, tt.problem)
		}
	}
}

func TestCompileLimitsTmpfs(t *testing.T) {
	got := compileLimits(Limits{TmpSizeMB: 64, ShmSizeMB: 16})
	if got.TmpSizeMB != 64 || got.ShmSizeMB != 16 {
		t.Errorf("compileLimits = %+v, want tmpSizeMB 64, shmSizeMB 16", got)
	}
}
