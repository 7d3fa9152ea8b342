//go:build linux

package linux_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The sandbox benchmarks time whole processes, the way an agent pays for
// them, and report the median next to the mean: `true` alone, `unshare`
// making the same kinds of namespaces, an empty Go program, the floor of
// fence's design (testdata/floor: a Go supervisor and a re-executed Go
// init in the namespaces, with no policy), and `fence -t code -- true`.

func BenchmarkTrue(b *testing.B) { benchProcess(b, "/bin/true") }

func BenchmarkUnshareTrue(b *testing.B) {
	if _, err := exec.LookPath("unshare"); err != nil {
		b.Skip("unshare not found")
	}
	benchProcess(b, "unshare", "-Urmnp", "-f", "/bin/true")
}

func BenchmarkGoEmpty(b *testing.B) { benchProcess(b, filepath.Join(bin, "floor")) }

func BenchmarkFloorTrue(b *testing.B) { benchProcess(b, filepath.Join(bin, "floor"), "/bin/true") }

func BenchmarkFenceTrue(b *testing.B) {
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b.Chdir(dir)
	benchProcess(b, filepath.Join(bin, "fence"), "-t", "code", "--", "/bin/true")
}

// benchProcess reports the median wall time of running name. It reports
// no memory figure: a child started from this (large) test process
// inherits its resident-size high-water mark at exec, so the child's
// ru_maxrss would be this process's. scripts/bench.sh measures the
// supervisor's peak through GNU time instead.
func benchProcess(b *testing.B, name string, args ...string) {
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(name, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}

// bwrapArgs is the bubblewrap command fence is measured against: the
// host read-only, a /dev and /proc of its own, every namespace new.
var bwrapArgs = []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--new-session", "--die-with-parent", "/bin/true"}

// BenchmarkVsBwrap runs `fence -- true`, `fence -t code -- true` and
// bwrap's true in turn, one of each an iteration, so that drift in the
// machine falls on all three alike, and reports each one's median and
// fence's ratios to bwrap. The fence binary is copied outside /tmp,
// where a sandbox's /tmp stays private (below it fence protects its own
// binary with a read-only /tmp).
func BenchmarkVsBwrap(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap not installed")
	}
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fence := filepath.Join(dir, "fence")
	if out, err := exec.Command("cp", filepath.Join(bin, "fence"), fence).CombinedOutput(); err != nil {
		b.Fatalf("copy fence: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		b.Fatal(err)
	}
	b.Chdir(work)
	runs := []struct {
		name string
		argv []string
	}{
		{"bwrap", append([]string{bwrap}, bwrapArgs...)},
		{"fence", []string{fence, "--", "/bin/true"}},
		{"fence-code", []string{fence, "-t", "code", "--", "/bin/true"}},
	}
	times := make([][]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			start := time.Now()
			if out, err := exec.Command(r.argv[0], r.argv[1:]...).CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", r.name, err, out)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	median := func(ts []time.Duration) float64 {
		slices.Sort(ts)
		return float64(ts[len(ts)/2].Microseconds()) / 1000
	}
	base := median(times[0])
	for i, r := range runs {
		m := median(times[i])
		b.ReportMetric(m, r.name+"-median-ms")
		if i > 0 {
			b.ReportMetric(m/base, r.name+"/bwrap")
		}
	}
}
