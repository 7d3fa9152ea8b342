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
