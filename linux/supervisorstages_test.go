//go:build linux

package linux_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// supervisorStages are the marks a fence built with the fencestages tag
// writes (see package stagetime), in the order a run passes them; "exec"
// is the benchmark's own, taken just before it starts fence, and
// "reaped" when it has seen fence exit.
var supervisorStages = []string{"exec", "main", "parsed", "loaded", "planned", "supervise", "lowered", "started", "ready", "waited", "exit", "reaped"}

// BenchmarkSupervisorStages breaks down `fence -- true` and `fence -t
// code -- true` on a plan cache hit, the two run in turn an iteration,
// in a small git repository, with a fence built with the fencestages
// tag outside /tmp. Each part is the median of its time from the mark
// before, reported as <case>/<mark>-ms: main is the runtime's start and
// package init, parsed the command line, loaded the cache lookup (the
// check of every read the entry noted and the decoding), planned the
// run's own part of the plan, supervise the runtime plan and listeners,
// lowered the lowering into the child's program, started the clone and
// id maps, ready the child's program up to the command's start, waited
// the command, exit what follows it (the checks of what it left) and
// reaped the process's exit.
func BenchmarkSupervisorStages(b *testing.B) {
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fence := filepath.Join(dir, "fence")
	build := exec.Command("go", "build", "-trimpath", "-tags", "fencestages", "-o", fence, "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build fence: %v\n%s", err, out)
	}
	repo, home := filepath.Join(dir, "repo"), filepath.Join(dir, "home")
	for _, d := range []string{repo, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	marks := filepath.Join(dir, "marks")
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "FENCE_STAGES_FILE=" + marks}
	cases := []struct {
		name string
		args []string
	}{{"default", []string{"--", "/bin/true"}}, {"code", []string{"-t", "code", "--", "/bin/true"}}}
	run := func(args ...string) []byte {
		c := exec.Command(fence, args...)
		c.Dir, c.Env = repo, env
		out, err := c.CombinedOutput()
		if err != nil {
			b.Fatalf("fence %q: %v\n%s", args, err, out)
		}
		return out
	}
	for _, c := range cases {
		for range 3 {
			run(c.args...)
		}
		if out := run(append([]string{"plan"}, c.args...)...); !strings.Contains(string(out), "plan cache: hit") {
			b.Fatalf("%s: no plan cache hit:\n%s", c.name, out)
		}
	}
	parts := make([]map[string][]float64, len(cases))
	for i := range parts {
		parts[i] = map[string][]float64{}
	}
	for b.Loop() {
		for i, c := range cases {
			start := monotonic()
			run(c.args...)
			at := readMarks(b, marks)
			at["exec"], at["reaped"] = start, monotonic()
			prev := start
			for _, s := range supervisorStages[1:] {
				t, ok := at[s]
				if !ok {
					b.Fatalf("%s: no mark %q in %v", c.name, s, at)
				}
				parts[i][s] = append(parts[i][s], float64(t-prev)/1e6)
				prev = t
			}
		}
	}
	for i, c := range cases {
		total := 0.0
		for _, s := range supervisorStages[1:] {
			m := medianOf(parts[i][s])
			total += m
			b.ReportMetric(m, c.name+"/"+s+"-ms")
		}
		b.ReportMetric(total, c.name+"/sum-ms")
	}
}

// readMarks reads the marks fence wrote to path: stage -> nanoseconds.
func readMarks(b *testing.B, path string) map[string]int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatalf("marks: %v", err)
	}
	defer f.Close()
	at := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, ns, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			b.Fatalf("mark %q: %v", sc.Text(), err)
		}
		at[name] = n
	}
	return at
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of the marks.
func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func medianOf(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
