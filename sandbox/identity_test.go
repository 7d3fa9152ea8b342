package sandbox

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/policy"
)

// identityWorld is a directory on the PATH holding a denied program
// (mytool), its other names and a program of its own.
func identityWorld(t testing.TB) (dir string, p *policy.Policy) {
	dir = t.TempDir()
	bin := filepath.Join(dir, "bin")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(bin, 0o755))
	tool := []byte("#!/bin/sh\necho the denied tool\n")
	must(os.WriteFile(filepath.Join(bin, "mytool"), tool, 0o755))
	must(os.Link(filepath.Join(bin, "mytool"), filepath.Join(bin, "hardlink")))
	must(os.Symlink("mytool", filepath.Join(bin, "symlink")))
	must(os.WriteFile(filepath.Join(bin, "copy"), tool, 0o755))
	must(os.WriteFile(filepath.Join(bin, "other"), []byte("#!/bin/sh\necho the other tool\n"), 0o755)) // same size
	must(os.WriteFile(filepath.Join(dir, "outside"), tool, 0o755))                                     // a copy off the PATH
	must(os.Symlink(filepath.Join(bin, "mytool"), filepath.Join(dir, "g")))
	// A copy later on the PATH than a program of the same name: the name
	// is that program's.
	must(os.Mkdir(filepath.Join(dir, "late"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "late", "other"), tool, 0o755))
	t.Setenv("PATH", bin+":"+filepath.Join(dir, "late"))
	p = policy.Compile(policy.Config{Command: policy.Command{Deny: []string{"mytool", "mytool push"}}},
		policy.Env{Dir: dir, Home: "/h", Origin: func(key, value string) string { return "test config" }})
	return dir, p
}

// TestIdentity: a denied program is known by what it is under every
// path (symlink, copy by content, on the PATH or not) and under the names
// of its hard links; a symlink or a copy on the PATH under another bare
// name is left to exec (argv mode judges the file, path mode masks the
// file a link leads to), since finding them would cost every start a
// stat of every file on the PATH.
func TestIdentity(t *testing.T) {
	dir, p := identityWorld(t)
	tests := []struct{ src, want string }{
		{"mytool", "mytool"},
		{"hardlink -x", "mytool"},
		{"symlink", ""},
		{"copy", ""},
		{"./bin/symlink", "mytool"},
		{"bin/copy", "mytool"},
		{"other", ""},
		{"late/other", "mytool"},
		{"./g push", "mytool"},
		{"./outside", "mytool"},
		{dir + "/bin/copy", "mytool"},
		{"echo ./g; ls " + dir + "/bin/other", ""},
		{"cd /x && " + dir + "/bin/hardlink arg", "mytool"},
		{"./nonexistent", ""},
	}
	for _, tt := range tests {
		got := ""
		if v := PreflightShell(p, tt.src); v.Blocked {
			got = v.Rule.Tokens[0]
		}
		if got != tt.want {
			t.Errorf("PreflightShell(%q) = %q, want %q", tt.src, got, tt.want)
		}
		argv := strings.Fields(tt.src)
		if strings.ContainsAny(tt.src, ";&") {
			continue
		}
		got = ""
		if v := PreflightArgv(p, argv); v.Blocked {
			got = v.Rule.Tokens[0]
		}
		if got != tt.want {
			t.Errorf("PreflightArgv(%q) = %q, want %q", argv, got, tt.want)
		}
	}
}

// TestIdentityPlan: path mode masks the hard links of a one-word rule's
// program in the searched directories, naming the rule (a symlink leads
// to the masked file).
func TestIdentityPlan(t *testing.T) {
	dir, p := identityWorld(t)
	plan, err := NewPlan(p, Options{Argv: []string{"true"}, Environ: []string{"PATH=" + filepath.Join(dir, "bin")}})
	if err != nil {
		t.Fatal(err)
	}
	masked := map[string]string{}
	for _, m := range plan.Mounts.Masks {
		masked[filepath.Base(m.Path)] = m.Why
	}
	for _, name := range []string{"mytool", "hardlink"} {
		if want := `command.deny "mytool", at run time`; masked[name] != want {
			t.Errorf("mask of %s: %q, want %q", name, masked[name], want)
		}
	}
	if _, ok := masked["other"]; ok {
		t.Errorf("other is masked: %v", plan.Mounts.Masks)
	}
	if len(plan.Programs) != 1 || plan.Programs[0].Name != "mytool" {
		t.Errorf("Programs = %+v, want mytool", plan.Programs)
	}
}

// TestIdentityMultiCall: a program of many names (pyenv's shims are one
// script) is known by its rule's name only.
func TestIdentityMultiCall(t *testing.T) {
	bin := t.TempDir()
	shim := []byte("#!/bin/sh\nexec pyenv exec \"${0##*/}\" \"$@\"\n")
	for _, n := range []string{"python2", "python3", "pip", "pip3", "pydoc", "idle"} {
		if err := os.WriteFile(filepath.Join(bin, n), shim, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	p := policy.Compile(policy.Config{Command: policy.Command{Deny: []string{"python2"}}}, policy.Env{Dir: bin, Home: "/h"})
	if v := PreflightShell(p, "python3 x.py"); v.Blocked {
		t.Errorf("PreflightShell(python3) = %s, want allowed", v.Message())
	}
	if v := PreflightShell(p, "python2 x.py"); !v.Blocked {
		t.Errorf("PreflightShell(python2) allowed")
	}
}

// TestIdentityBudget: a search the budget cuts short fails closed.
func TestIdentityBudget(t *testing.T) {
	_, p := identityWorld(t)
	tab := findPrograms(p, processDirs(), time.Now().Add(-time.Second))
	if tab.err == nil || !strings.Contains(tab.err.Error(), "start-up budget ran out while fence was finding the programs command.deny names") {
		t.Errorf("err = %v, want the budget error", tab.err)
	}
}

func TestParseBuildIDNote(t *testing.T) {
	note := make([]byte, 12)
	binary.LittleEndian.PutUint32(note, 4)
	binary.LittleEndian.PutUint32(note[4:], 3)
	binary.LittleEndian.PutUint32(note[8:], 3)
	note = append(note, "GNU\x00\xab\xcd\xef\x00"...)
	tests := []struct {
		data []byte
		want string
	}{
		{note, "abcdef"},
		{note[:15], ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := parseBuildIDNote(tt.data, binary.LittleEndian); got != tt.want {
			t.Errorf("parseBuildIDNote(% x) = %q, want %q", tt.data, got, tt.want)
		}
	}
	if _, err := os.Stat("/usr/bin/git"); err == nil {
		if id, err := BuildID("/usr/bin/git"); err != nil || len(id) < 16 {
			t.Logf("BuildID(/usr/bin/git) = %q, %v (no GNU build ID here)", id, err)
		}
	}
}

// BenchmarkIdentity finds the programs the code template's deny rules
// name (git, gh) and their other names on this machine's PATH and
// standard directories, as each run does once at start.
func BenchmarkIdentity(b *testing.B) {
	res, err := policy.Load(policy.Options{Template: "code", Dir: b.TempDir(), Home: "/nonexistent", UserConfigDir: "/nonexistent"})
	if err != nil {
		b.Fatal(err)
	}
	p := policy.Compile(res.Config, policy.Env{Dir: "/w", Home: "/h"})
	dirs := processDirs()
	var tab *programs
	for b.Loop() {
		tab = findPrograms(p, dirs, time.Now().Add(time.Second))
	}
	b.ReportMetric(float64(len(tab.list)), "programs")
}

// TestDeniedProgram: an open file is known by its identity, whatever its
// name, as argv mode sees the program the kernel runs.
func TestDeniedProgram(t *testing.T) {
	dir, p := identityWorld(t)
	for _, tt := range []struct{ path, want string }{
		{"bin/mytool", "mytool"},
		{"bin/hardlink", "mytool"},
		{"outside", "mytool"},
		{"bin/other", ""},
	} {
		f, err := os.Open(filepath.Join(dir, tt.path))
		if err != nil {
			t.Fatal(err)
		}
		if got := DeniedProgram(p, f); got != tt.want {
			t.Errorf("DeniedProgram(%s) = %q, want %q", tt.path, got, tt.want)
		}
		f.Close()
	}
}
