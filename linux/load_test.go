//go:build linux

package linux_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var loadN = flag.Int("load", 0, "run TestLoad with this many sandboxes (scripts/bench.sh load uses 500)")

// TestLoad starts many sandboxes, 16 at a time, mixing the default policy,
// the code template with its proxies, and a command killed mid-run, and
// then looks for anything fence left behind: processes, mounts, unix
// sockets, temporary files, descriptors. It runs only with -load N.
func TestLoad(t *testing.T) {
	if *loadN == 0 {
		t.Skip("run with -load N (scripts/bench.sh load)")
	}
	plain := newWorld(t, os.Getuid(), `{}`)
	code := newWorld(t, os.Getuid(), `{"extends": "code"}`)
	before := snapshot(t)
	kinds := []struct {
		name string
		w    *world
		args []string
		run  func(cmd *exec.Cmd) error
		code int
		out  string
	}{
		{"default policy", plain, []string{"-c", "echo ok"}, nil, 0, "ok\n"},
		{"code template, proxy", code, []string{"--", "./netprobe", "connect", "127.0.0.1:9"}, nil, 0, "HTTP/1.1 403 Forbidden\n"},
		{"killed mid-run", plain, []string{"--", "sleep", "30"}, func(cmd *exec.Cmd) error {
			if err := cmd.Start(); err != nil {
				return err
			}
			time.Sleep(150 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGTERM)
			return cmd.Wait()
		}, 128 + 15, ""},
	}
	start := time.Now()
	var mu sync.Mutex
	failures := 0
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range *loadN {
		k := kinds[i%len(kinds)]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := k.w.command(ctx, nil, k.args...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			run := k.run
			if run == nil {
				run = func(c *exec.Cmd) error { return c.Run() }
			}
			err := run(cmd)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			if code != k.code || k.out != "" && out.String() != k.out {
				mu.Lock()
				failures++
				if failures <= 5 {
					t.Errorf("%s (run %d): exit %d, want %d; stdout %q; stderr %q", k.name, i, code, k.code, out.String(), errb.String())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d sandboxes, 16 at a time, in %.1fs: %.1f sandboxes/s; %d unexpected results", *loadN, elapsed.Seconds(), float64(*loadN)/elapsed.Seconds(), failures)
	time.Sleep(200 * time.Millisecond) // the kernel reaps the last namespaces
	after := snapshot(t)
	before.compare(t, after)
}

// leftovers is what fence could leave behind on the host.
type leftovers struct {
	inits, mounts, unixSockets, tempFiles, fds int
}

func snapshot(t *testing.T) leftovers {
	t.Helper()
	count := func(path string) int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n"))
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	temps, _ := filepath.Glob(filepath.Join(os.TempDir(), "fence-*"))
	return leftovers{
		inits:       len(processesWith("fence-init")),
		mounts:      count("/proc/self/mountinfo"),
		unixSockets: count("/proc/net/unix"),
		tempFiles:   len(temps),
		fds:         len(fds),
	}
}

func (b leftovers) compare(t *testing.T, a leftovers) {
	t.Helper()
	for _, c := range []struct {
		what          string
		before, after int
	}{
		{"sandbox inits still running", b.inits, a.inits},
		{"mounts", b.mounts, a.mounts},
		{"unix sockets", b.unixSockets, a.unixSockets},
		{"fence-* temporary files", b.tempFiles, a.tempFiles},
		{"descriptors of the test process", b.fds, a.fds},
	} {
		if c.after > c.before {
			t.Errorf("%s: %d before the load, %d after", c.what, c.before, c.after)
		}
	}
}

// TestEarlySignal sends SIGTERM while the sandbox is still being built:
// fence must end as the command would have, 128+15, however early.
func TestEarlySignal(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{}`)
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := w.command(ctx, nil, "--", "sleep", "30")
		must(t, cmd.Start())
		time.Sleep(time.Duration(i) * 3 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		cancel()
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("after %d ms: %v", i*3, err)
		}
		// Signalled before fence set up its handlers, fence itself dies of
		// the signal (-1); after that it reports 143.
		if code := ee.ExitCode(); code != 128+15 && code != -1 {
			t.Errorf("SIGTERM after %d ms: exit %d, want 143", i*3, code)
		}
	}
}
