//go:build linux

package linux_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The sandbox benchmarks time whole processes, the way an agent pays for
// them, and report the median next to the mean: `true` alone, `unshare`
// making the same kinds of namespaces, and `fence -t code -- true`.

func BenchmarkTrue(b *testing.B) { benchProcess(b, "/bin/true") }

func BenchmarkUnshareTrue(b *testing.B) {
	if _, err := exec.LookPath("unshare"); err != nil {
		b.Skip("unshare not found")
	}
	benchProcess(b, "unshare", "-Urmnp", "-f", "/bin/true")
}

func BenchmarkFenceTrue(b *testing.B) {
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b.Chdir(dir)
	benchProcess(b, filepath.Join(bin, "fence"), "-t", "code", "--", "/bin/true")
}

func benchProcess(b *testing.B, name string, args ...string) {
	var times []time.Duration
	var maxRSS int64
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(name, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
		times = append(times, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(maxRSS)/1024, "peak-rss-MB")
}
