//go:build linux

package linux

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fence-sandbox/fence/sandbox"
)

// BenchmarkChildStages times the sandbox child of `fence -t code --
// /bin/true`'s plan (in this directory) stopped after each part of its
// program in turn (the binary built outside /tmp), from the lowering of the plan to the child's exit, a
// round of every cut an iteration: "clone+maps" exits before the first
// step, each later one after the part it names; "exec true" is the whole
// program and pid 1 running the command. Each part's cost is the
// difference between its median and the one before (reported as
// "<part>-ms"); the lowering, which the supervisor does before the
// clone, is reported apart.
func BenchmarkChildStages(b *testing.B) {
	// The binary outside /tmp, and there while the plan runs: the plan
	// protects it.
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fence := filepath.Join(dir, "fence")
	if out, err := exec.Command("go", "build", "-o", fence, "..").CombinedOutput(); err != nil {
		b.Fatalf("build fence: %v\n%s", err, out)
	}
	out, err := exec.Command(fence, "-t", "code", "plan", "--", "/bin/true").Output()
	if err != nil {
		b.Fatalf("fence plan: %v", err)
	}
	var plan sandbox.Plan
	if err := json.Unmarshal(out, &plan); err != nil {
		b.Fatalf("decode the plan: %v", err)
	}
	w := &wire{Plan: &plan, Env: []string{"PATH=/usr/bin:/bin"}, Namespaces: true}
	probe, _, err := lowerPlan(w, childFDs{sync: -1, jobs: -1})
	if err != nil {
		b.Fatal(err)
	}
	cuts := []string{"clone+maps"}
	for _, s := range probe.stages {
		cuts = append(cuts, s.name)
	}
	cuts = append(cuts, "exec true")
	times := make([][]time.Duration, len(cuts))
	var lowering []time.Duration
	defer func() { testOnlyLowered = nil }()
	for b.Loop() {
		for i := range cuts {
			start := time.Now()
			testOnlyLowered = func(p *program) {
				lowering = append(lowering, time.Since(start))
				cutAfter(p, i)
			}
			s, err := startChild(w)
			if err != nil {
				b.Fatal(err)
			}
			ps, err := s.proc.Wait()
			if err != nil || !ps.Success() {
				_, _, rerr := s.report()
				b.Fatalf("%s: %v %v: %v", cuts[i], ps, err, rerr)
			}
			times[i] = append(times[i], time.Since(start))
			s.release()
			s.close()
		}
	}
	median := func(ts []time.Duration) float64 {
		ts = slices.Clone(ts)
		slices.Sort(ts)
		return float64(ts[len(ts)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(lowering), "lowering-ms")
	prev := 0.0
	for i, c := range cuts {
		m := median(times[i])
		name := strings.NewReplacer(" ", "_", ",", "").Replace(c)
		b.ReportMetric(m-prev, name+"-ms")
		prev = m
	}
	b.ReportMetric(prev, "total-ms")
}

// cutAfter makes p stop, exiting 0, after its first n parts (none: at
// once; all: before pid 1's duties); past that, p is left whole.
func cutAfter(p *program, n int) {
	at := len(p.steps)
	switch {
	case n == 0:
		at = 0
	case n < len(p.stages):
		at = p.stages[n].at
	case n > len(p.stages):
		return
	}
	p.steps = append(p.steps[:at:at], step{nr: unix.SYS_EXIT_GROUP})
}
