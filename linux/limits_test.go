//go:build linux

package linux_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/linux"
	"github.com/fence-sandbox/fence/policy"
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

// TestTmpfsLimits fills the sandbox's /tmp and /dev/shm past their
// sizes, as root and as uid 65534: the write fails with ENOSPC at the
// size (and a file count at the inode limit), a write within it works,
// and the sizes are the default share of memory unless the policy or a
// flag lowers them. Where /tmp or /dev/shm is the host's, a size set
// for it is a warning.
func TestTmpfsLimits(t *testing.T) {
	def := linux.SizeTmpfs(policy.RunLimits{})
	// The host's /tmp, with its sockets left alone: what other programs
	// have bound there is not what these cases are about.
	sharedTmp := `{"filesystem": {"allowWrite": ["/tmp"]}, "network": {"allowAllUnixSockets": true}}`
	statfs := `stat -f -c '%b %S %c' /tmp /dev/shm` // blocks of 4 KiB, inodes
	sizes := func(tmp, shm uint64) string {
		return fmt.Sprintf("^%d 4096 %d\n%d 4096 %d\n$", tmp<<8, policy.TmpfsInodes(tmp), shm<<8, policy.TmpfsInodes(shm))
	}
	tests := []struct {
		name, policy   string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"a write past --limit-tmp fails with ENOSPC", `{}`,
			[]string{"--limit-tmp", "8", "-c", "head -c 16M /dev/zero > /tmp/x; echo $?; stat -c %s /tmp/x"}, 0, `^1\n8388608\n$`, `No space left on device`},
		{"a write within --limit-tmp works", `{}`,
			[]string{"--limit-tmp", "8", "-c", "head -c 6M /dev/zero > /tmp/x && stat -c %s /tmp/x"}, 0, `^6291456\n$`, `^$`},
		{"a write past --limit-shm fails with ENOSPC", `{}`,
			[]string{"--limit-shm", "8", "-c", "head -c 16M /dev/zero > /dev/shm/x; echo $?; stat -c %s /dev/shm/x"}, 0, `^1\n8388608\n$`, `No space left on device`},
		{"a write within --limit-shm works", `{}`,
			[]string{"--limit-shm", "8", "-c", "head -c 6M /dev/zero > /dev/shm/x && stat -c %s /dev/shm/x"}, 0, `^6291456\n$`, `^$`},
		{"more files than the inode limit fail with ENOSPC", `{}`,
			[]string{"--limit-tmp", "1", "-c", "i=0; while [ $i -lt 1100 ]; do : > /tmp/f$i || exit 3; i=$((i+1)); done"}, 3, "", `No space left on device`},
		{"the default sizes", `{}`, []string{"-c", statfs}, 0, sizes(def.TmpMB, def.ShmMB), `^$`},
		{"sizes from the policy", `{"limits": {"tmpSizeMB": 8, "shmSizeMB": 4}}`, []string{"-c", statfs}, 0, sizes(8, 4), ""},
		{"a policy's size past the default", `{"limits": {"tmpSizeMB": 100000}}`, []string{"-c", statfs}, 0, sizes(100000, def.ShmMB), ""},
		{"a flag lowers the policy's size, never raises it", `{"limits": {"tmpSizeMB": 8, "shmSizeMB": 4}}`,
			[]string{"--limit-tmp", "100", "--limit-shm", "2", "-c", statfs}, 0, sizes(8, 2), ""},
		{"a flag does not raise the default", `{}`, []string{"--limit-tmp", "100000000", "--limit-shm", "100000000", "-c", statfs}, 0, sizes(def.TmpMB, def.ShmMB), ""},
		{"-d says the sizes", `{}`, []string{"-d", "--limit-tmp", "8", "--", "true"}, 0, "",
			`(?m)^fence: debug: limits: private /tmp: tmpfs of 8 MiB and 1024 inodes, from limits.tmpSizeMB or --limit-tmp; a write past it fails with ENOSPC\nfence: debug: limits: /dev/shm: tmpfs of \d+ MiB and \d+ inodes, an eighth of .* by default`},
		{"-d says the host's /tmp has no size", sharedTmp, []string{"-d", "--", "true"}, 0, "",
			`(?m)^fence: debug: limits: /tmp is the host's, writable \(rule: filesystem.allowWrite "/tmp"\): no size limit of fence's applies to it$`},
		{"a size for the host's /tmp is a warning", sharedTmp, []string{"--limit-tmp", "8", "--", "true"}, 0, "",
			`^fence: warning: limits.tmpSizeMB and --limit-tmp do not apply: the sandbox's /tmp is the host's, writable \(rule: filesystem.allowWrite "/tmp"\)\n$`},
		{"and for the host's /dev/shm", `{"devices": {"mode": "host"}, "limits": {"shmSizeMB": 8}}`, []string{"--", "true"}, 0, "",
			`^fence: warning: limits.shmSizeMB and --limit-shm do not apply: devices.mode "host" gives the sandbox the host's /dev/shm\n$`},
		{"a negative size is refused", `{"limits": {"tmpSizeMB": -1}}`, []string{"--", "true"}, 125, "", `limits.tmpSizeMB: -1 is negative`},
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

// TestTmpfsCgroupDefault runs fence in a memory cgroup of 512 MiB that
// the test makes: the default sizes are shares of that limit, not of the
// machine's memory.
func TestTmpfsCgroupDefault(t *testing.T) {
	dir := memoryCgroup(t, 512<<20)
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			fence := w.asUser(filepath.Join(bin, "fence"), "-s", w.settings, "-d", "-c", `stat -f -c '%b %c' /tmp /dev/shm`)
			cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}, fence...)...)
			cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
			r := runResult(t, cmd)
			check(t, r, 0, fmt.Sprintf("^%d %d\n%d %d\n$", 128<<8, policy.TmpfsInodes(128), 64<<8, policy.TmpfsInodes(64)),
				`fence: debug: limits: private /tmp: tmpfs of 128 MiB and 16384 inodes, a quarter of the memory limit of cgroup \S*/fence-test-\d+ \(512 MiB; MemTotal \d+ MiB\) by default`)
		})
	}
}

// memoryCgroup makes a cgroup below this process's, in the hierarchy of
// the memory controller, with a memory limit of limit bytes, and returns
// its directory. It skips the test where that cannot be done.
func memoryCgroup(t *testing.T, limit uint64) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	base, file, v2 := "", "", ""
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		switch {
		case len(parts) < 3:
		case strings.Contains(","+parts[1]+",", ",memory,"):
			base, file = "/sys/fs/cgroup/memory"+parts[2], "memory.limit_in_bytes"
		case parts[1] == "":
			v2 = parts[2]
		}
	}
	if base == "" && v2 != "" {
		base, file = "/sys/fs/cgroup"+v2, "memory.max"
	}
	dir := filepath.Join(base, fmt.Sprintf("fence-test-%d", os.Getpid()))
	if base == "" || os.Mkdir(dir, 0o755) != nil {
		t.Skip("cannot make a memory cgroup here (not root, or no memory controller)")
	}
	t.Cleanup(func() { os.Remove(dir) })
	if err := os.WriteFile(filepath.Join(dir, file), []byte(fmt.Sprint(limit)), 0o644); err != nil {
		t.Skipf("cannot set the memory limit of a cgroup here: %v", err)
	}
	return dir
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
			// The shell may give up forking before the timeout (exit 2),
			// or be ended by it (124); either way the limit held it.
			r = w.fence(t, "", nil, "--limit-nproc", "40", "--timeout", "2s", "-c", "# "+marker+"\nb(){ b|b& }; b; sleep 60")
			if r.code == 2 {
				check(t, r, 2, "", `fork: .*Resource temporarily unavailable`)
			} else {
				check(t, r, 124, "", `fence: timed out after 2s`)
			}
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
