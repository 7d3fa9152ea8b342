package inputs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// record notes what read does, and returns the observations.
func record(t *testing.T, read func()) []Observation {
	t.Helper()
	r := Start()
	read()
	r.Stop()
	if taint := r.Taint(); taint != "" {
		t.Fatalf("tainted: %s", taint)
	}
	return r.Observations()
}

// TestCheckSeesChanges: each operation's observation holds until what it
// read changes, and no longer after.
func TestCheckSeesChanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	link := filepath.Join(dir, "l")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(file, []byte("one"), 0o644))
	must(os.Symlink("f", link))
	tests := []struct {
		name   string
		read   func()
		change func()
	}{
		{"lstat of a file", func() { Lstat(file) }, func() { must(os.Chmod(file, 0o600)) }},
		{"stat of a missing path", func() { Stat(file + ".new") }, func() { must(os.WriteFile(file+".new", nil, 0o644)) }},
		{"content", func() { ReadFile(file) }, func() { must(os.WriteFile(file, []byte("two"), 0o644)) }},
		{"open", func() { f, _ := Open(file); f.Close() }, func() { must(os.Truncate(file, 1)) }},
		{"a link's target", func() { Readlink(link) }, func() { os.Remove(link); must(os.Symlink("g", link)) }},
		{"a resolved path", func() { EvalSymlinks(link) }, func() { os.Remove(link); must(os.Symlink(dir, link)) }},
		{"a fresh listing", func() { ReadDir(dir) }, func() { must(os.WriteFile(filepath.Join(dir, "n"), nil, 0o644)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := record(t, tt.read)
			if len(obs) == 0 {
				t.Fatal("nothing noted")
			}
			if o, ok := Check(obs); !ok {
				t.Fatalf("unchanged, but %s does not hold", o)
			}
			tt.change()
			if _, ok := Check(obs); ok {
				t.Fatal("changed, but every observation holds")
			}
		})
	}
}

// TestListingStamp: a listing of a directory whose times are older than
// racyWindow is checked by its stamp, which an entry added, or a
// modification time set back after one, moves; a newer one is listed
// again.
func TestListingStamp(t *testing.T) {
	dir := t.TempDir()
	defer func() { testOnlyNow = time.Now }()
	obs := record(t, func() { ReadDir(dir) })
	if !strings.HasPrefix(obs[0].Seen, "list ") {
		t.Fatalf("a directory made now is noted %q, want its listing", obs[0].Seen)
	}
	testOnlyNow = func() time.Time { return time.Now().Add(time.Minute) }
	obs = record(t, func() { ReadDir(dir) })
	if !strings.HasPrefix(obs[0].Seen, "stamp ") {
		t.Fatalf("an old directory is noted %q, want its stamp", obs[0].Seen)
	}
	if o, ok := Check(obs); !ok {
		t.Fatalf("unchanged, but %s does not hold", o)
	}
	fi, _ := os.Stat(dir)
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(dir, fi.ModTime(), fi.ModTime())
	if _, ok := Check(obs); ok {
		t.Fatal("an entry was added, but the stamp holds")
	}
}

// TestOwnDirAndTaint: fence's own entries in its own directory are not
// noted, anything else there is; and a read whose result changes while
// recording taints the record.
func TestOwnDirAndTaint(t *testing.T) {
	dir := t.TempDir()
	SetOwnDir(dir, func(name string) bool { return strings.HasPrefix(name, "entry") })
	defer SetOwnDir("", nil)
	os.WriteFile(filepath.Join(dir, "entry1"), nil, 0o600)
	obs := record(t, func() { ReadDir(dir); Lstat(filepath.Join(dir, "entry1")) })
	if len(obs) != 1 || obs[0].Op != OpReadDir {
		t.Fatalf("noted %v, want the listing alone", obs)
	}
	os.WriteFile(filepath.Join(dir, "entry2"), nil, 0o600)
	if o, ok := Check(obs); !ok {
		t.Fatalf("an entry of fence's own was added, and %s no longer holds", o)
	}
	os.Mkdir(filepath.Join(dir, "planted"), 0o700)
	if _, ok := Check(obs); ok {
		t.Fatal("something else was planted in fence's directory, but the listing holds")
	}
	other := t.TempDir()
	r := Start()
	Lstat(filepath.Join(other, "f"))
	os.WriteFile(filepath.Join(other, "f"), nil, 0o644)
	Lstat(filepath.Join(other, "f"))
	r.Stop()
	if r.Taint() == "" {
		t.Fatal("a result changed while recording, but the record is not tainted")
	}
}

// TestCheckManyReads: in a record of more reads than one goroutine
// checks, a change to any one of them, first, last or between, and an
// operation no Checker knows, make it stale; with none, it holds.
func TestCheckManyReads(t *testing.T) {
	dir := t.TempDir()
	const n = 5 * checkBatch
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprint(i))
		if i%2 == 0 {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, p)
	}
	obs := record(t, func() {
		for _, p := range paths {
			Lstat(p)
		}
	})
	if len(obs) != n {
		t.Fatalf("noted %d reads, want %d", len(obs), n)
	}
	if o, ok := Check(obs); !ok {
		t.Fatalf("unchanged, but %s does not hold", o)
	}
	unknown := append(slices.Clone(obs), Observation{Op: "no such op", Path: dir})
	if o, ok := Check(unknown); ok || o.Op != "no such op" {
		t.Errorf("an unknown operation: Check = %s, %v; want it stale", o, ok)
	}
	for _, i := range []int{0, 1, n/2 + 1, n - 2, n - 1} {
		obs := record(t, func() {
			for _, p := range paths {
				Lstat(p)
			}
		})
		if i%2 == 0 {
			os.Remove(paths[i])
		} else {
			os.WriteFile(paths[i], nil, 0o644)
		}
		if o, ok := Check(obs); ok || o.Path != paths[i] {
			t.Errorf("read %d changed: Check = %s, %v; want it stale", i, o, ok)
		}
	}
}
