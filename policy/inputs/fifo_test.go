package inputs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// noHang runs f and fails the test when it has not returned after a
// minute: what it guards is a read that blocks for good, not a speed.
func noHang(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s has not returned after a minute", what)
	}
}

// TestReadsRefuseNonRegular puts a FIFO and a directory where a file is
// read: ReadFile and Open refuse them at once, noted as an error, and a
// read noted of a regular file that a FIFO then replaced is stale
// without blocking.
func TestReadsRefuseNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir} {
		noHang(t, "ReadFile of "+p, func() {
			if _, err := ReadFile(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s): %v, want %v", p, err, ErrNotRegular)
			}
		})
		noHang(t, "Open of "+p, func() {
			if f, err := Open(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open(%s): %v, want %v", p, err, ErrNotRegular)
				if f != nil {
					f.Close()
				}
			}
		})
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("gitdir: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	obs := record(t, func() {
		ReadFile(file)
		if f, err := Open(file); err == nil {
			f.Close()
		}
	})
	os.Remove(file)
	if err := syscall.Mkfifo(file, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		noHang(t, "Check of "+o.String(), func() {
			if _, ok := Check([]Observation{o}); ok {
				t.Errorf("%s holds after the file became a FIFO", o)
			}
		})
	}
}
