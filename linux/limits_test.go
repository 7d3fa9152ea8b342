//go:build linux

package linux_test

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestLimits runs commands against each limit, as root and as uid 65534,
// and checks what the command meets: the limit as ulimit reports it, and
// the kernel stopping the command when it goes past.
func TestLimits(t *testing.T) {
	tests := []struct {
		name, policy   string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"limits as the command sees them", `{}`,
			[]string{"--limit-nofile", "32", "--limit-cpu", "7", "--limit-as", "300", "--limit-fsize", "2", "--limit-nproc", "50", "-c", "ulimit -n -t -v -f -u"},
			0, `(?m)^open files .* 32\ncpu time .* 7\nvirtual memory .* 307200\nfile size .* 2048\nmax user processes .* 50$`, ""},
		{"limits from the policy", `{"limits": {"openFiles": 40, "fileSizeMB": 1}}`,
			[]string{"-c", "ulimit -n -f"}, 0, `(?m)^open files .* 40\nfile size .* 1024$`, ""},
		{"a flag tightens the policy's limit, never loosens it", `{"limits": {"openFiles": 40, "cpuSeconds": 3}}`,
			[]string{"--limit-nofile", "1000", "--limit-cpu", "2", "-c", "ulimit -n -t"}, 0, `(?m)^open files .* 40\ncpu time .* 2$`, ""},
		{"file size", `{"filesystem": {"allowWrite": ["."]}}`,
			[]string{"--limit-fsize", "1", "-c", "head -c 3M /dev/zero > big; echo $?; stat -c %s big"}, 0, `^153\n1048576\n$`, `File size limit exceeded`},
		{"address space", `{}`,
			[]string{"--limit-as", "100", "-c", `v=$(head -c 150M /dev/zero | tr "\0" x); echo ${#v}`}, 2, "", `cannot allocate`},
		{"cpu time", `{}`,
			[]string{"--limit-cpu", "1", "-c", "while :; do :; done"}, 128 + 24, "", ""},
		{"the policy cannot lower openFiles below what start-up needs", `{"limits": {"openFiles": 8}}`,
			[]string{"--", "true"}, 125, "", `limits.openFiles: 8 is too few: want at least 16`},
		{"nor can a flag", `{}`, []string{"--limit-nofile", "3", "--", "true"}, 125, "", `--limit-nofile 3: too few, want at least 16`},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, tt.args...)
				check(t, r, tt.code, tt.stdout, tt.stderr)
			})
		}
	}
}

// TestProcessLimit starts more background processes than limits.processes
// allows. The kernel does not apply RLIMIT_NPROC to root, so this runs as
// an unprivileged uid only.
func TestProcessLimit(t *testing.T) {
	for _, u := range users(t) {
		if u.uid == 0 {
			continue
		}
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			script := `i=0; while [ $i -lt 60 ]; do sleep 5 & i=$((i+1)); done; echo started`
			r := w.fence(t, "", nil, "--limit-nproc", "20", "--", "/bin/sh", "-c", script)
			check(t, r, 2, "", `Cannot fork`)
			r = w.fence(t, "", nil, "--", "/bin/sh", "-c", script)
			check(t, r, 0, `^started\n$`, "")

			// A fork bomb meets the process limit, the timeout ends it,
			// and nothing of it survives fence.
			marker := fmt.Sprintf("bomb%d", os.Getpid())
			r = w.fence(t, "", nil, "--limit-nproc", "40", "--timeout", "2s", "-c", "# "+marker+"\nb(){ b|b& }; b; sleep 60")
			check(t, r, 124, "", `fence: timed out after 2s`)
			time.Sleep(100 * time.Millisecond)
			if pids := processesWith(marker); len(pids) > 0 {
				t.Errorf("fork bomb processes outlived fence: %v", pids)
			}
		})
	}
}

// TestTimeout: the timeout ends the whole sandbox, background processes
// included, and fence exits 124; the policy's timeout holds against a
// longer --timeout.
func TestTimeout(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			marker := fmt.Sprint(300 + os.Getpid()%1000)
			w := newWorld(t, u.uid, `{"limits": {"timeout": "1s"}}`)
			r := w.fence(t, "", nil, "--timeout", "1h", "-c", "sleep "+marker+" & sleep "+marker)
			check(t, r, 124, "", `^fence: timed out after 1s \(limits.timeout or --timeout\): the sandbox and every process in it were killed\n$`)
			time.Sleep(100 * time.Millisecond) // the kernel reaps the namespace's processes after its init
			if pids := processesWith("sleep\x00" + marker); len(pids) > 0 {
				t.Errorf("processes outlived the timeout: %v", pids)
			}
		})
	}
}
