//go:build linux

package linux_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// execformsBin builds testdata/execforms once, for the tests that need it.
var execformsBin = sync.OnceValues(func() (string, error) {
	out := filepath.Join(bin, "execforms")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/execforms")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", &exec.Error{Name: string(b), Err: err}
	}
	return out, nil
})

// execWorld is a world in argv mode denying git push, with execforms in
// its workspace and the given files (mode 0755).
func execWorld(t *testing.T, u user, files map[string]string) *world {
	t.Helper()
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("/usr/bin/git not found")
	}
	helper, err := execformsBin()
	must(t, err)
	w := newWorld(t, u.uid, `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`)
	b, err := os.ReadFile(helper)
	must(t, err)
	files["execforms"] = string(b)
	for name, text := range files {
		p := filepath.Join(w.ws, name)
		must(t, os.WriteFile(p, []byte(text), 0o755))
		must(t, os.Lchown(p, u.uid, u.uid))
	}
	return w
}

// gitLoader is the dynamic loader that runs /usr/bin/git (its PT_INTERP).
func gitLoader(t *testing.T) string {
	f, err := elf.Open("/usr/bin/git")
	must(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil && len(b) > 1 {
				return string(b[:len(b)-1])
			}
		}
	}
	t.Skip("/usr/bin/git has no dynamic loader")
	return ""
}

const (
	refused  = `^error: operation not permitted\n$`
	pushRule = `matches command.deny "git push" \(settings file: .*\) \(at exec\)$`
)

// TestExecLoader: the dynamic loader running git is judged as git, in
// preflight (125) and at exec, by its name, by its name's pattern, or
// (a copy under another name) by its DT_SONAME.
func TestExecLoader(t *testing.T) {
	loader := gitLoader(t)
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			ld, err := os.ReadFile(loader)
			must(t, err)
			w := execWorld(t, u, map[string]string{"ld-copy.so.1": string(ld), "mytool": string(ld)})
			r := w.fence(t, "", nil, "-c", loader+" /usr/bin/git push origin")
			check(t, r, 125, "", `^fence: blocked ".*/usr/bin/git push origin": matches command.deny "git push"`)
			r = w.fence(t, "", nil, "--", loader, "--library-path", "/lib", "/usr/bin/git", "push")
			check(t, r, 125, "", `^fence: blocked ".*/usr/bin/git push": matches command.deny "git push"`)
			for _, l := range []string{loader, "./ld-copy.so.1", "./mytool"} {
				r = w.fence(t, "", nil, "--", "./netprobe", "exec", l, "/usr/bin/git", "push", "origin")
				check(t, r, 0, refused, `(?m)^fence: blocked ".*/usr/bin/git push origin": `+pushRule)
			}
			r = w.fence(t, "", nil, "--", "./netprobe", "exec", loader, "/usr/bin/git", "status")
			check(t, r, 128, "", `not a git repository`)
		})
	}
}

// TestExecFd: an exec of an fd (execveat AT_EMPTY_PATH, /proc/self/fd/N)
// or from a directory fd is judged by the file behind it, whatever
// argv[0] says, a copy of git under another name included; a memfd is
// refused, named, with the way to allow it.
func TestExecFd(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			git, err := os.ReadFile("/usr/bin/git")
			must(t, err)
			w := execWorld(t, u, map[string]string{"tool": string(git)})
			for _, form := range [][]string{{"fd", "/usr/bin/git"}, {"procfd", "/usr/bin/git"}, {"dirfd", "/usr/bin", "git"}, {"fd", "tool"}} {
				r := w.fence(t, "", nil, append(append([]string{"--", "./execforms"}, form...), "push", "origin")...)
				check(t, r, 0, refused, `(?m)^fence: blocked "git push origin": `+pushRule)
				r = w.fence(t, "", nil, append(append([]string{"--", "./execforms"}, form...), "status")...)
				check(t, r, 128, "", `not a git repository`)
			}
			for _, args := range [][]string{{"push"}, {"status"}} {
				r := w.fence(t, "", nil, append([]string{"--", "./execforms", "memfd", "/usr/bin/git"}, args...)...)
				check(t, r, 0, refused, `(?m)^fence: blocked "prog `+args[0]+`": the program is an anonymous file "memfd:git \(deleted\)" .*: run the program from a file, or use runtimeExecPolicy "path" \(at exec\)$`)
			}
		})
	}
}

// TestExecShebang: a script whose interpreter line runs git push is
// refused as git push (the kernel starts the interpreter without another
// exec), nested in another script too; a plain script still runs.
func TestExecShebang(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := execWorld(t, u, map[string]string{
				"pusher": "#!/usr/bin/git push\n",
				"hello":  "#!/bin/sh\necho hello \"$@\"\n",
			})
			must(t, os.WriteFile(filepath.Join(w.ws, "outer"), []byte("#!"+filepath.Join(w.ws, "pusher")+" -v\n"), 0o755))
			must(t, os.Lchown(filepath.Join(w.ws, "outer"), u.uid, u.uid))
			r := w.fence(t, "", nil, "--", "./netprobe", "exec", "./pusher", "origin")
			check(t, r, 0, refused, `(?m)^fence: blocked "git push ./pusher origin": `+pushRule)
			r = w.fence(t, "", nil, "--", "./netprobe", "exec", "./outer", "x")
			check(t, r, 0, refused, `(?m)^fence: blocked "git push .*/pusher -v ./outer x": `+pushRule)
			r = w.fence(t, "", nil, "--", "./execforms", "fd", "pusher")
			check(t, r, 0, refused, `(?m)^fence: blocked "git push /dev/fd/\d+": `+pushRule)
			r = w.fence(t, "", nil, "-c", "./pusher")
			check(t, r, 126, "", `(?m)^fence: blocked "git push ./pusher": `+pushRule)
			r = w.fence(t, "", nil, "--", "./netprobe", "exec", "./hello", "a")
			check(t, r, 0, `^hello a\n$`, "")
		})
	}
}

// BenchmarkExecJudged is the cost of one exec the supervisor judges in
// argv mode, timed in the sandbox by a program that execs b.N times in a
// loop, each exec failing so that nothing forks: under
// runtimeExecPolicy "path" (no notification: the syscall alone), and in
// argv mode a program allowed (the kernel then fails to find it), a
// script whose interpreter line is judged too (its interpreter is
// missing), and git push (refused). allowed-us less path-us is what
// argv mode adds to an allowed exec; the kernel reads argv again only
// after fence's answer, so it is also the window in which another
// thread can rewrite argv after fence read it.
func BenchmarkExecJudged(b *testing.B) {
	dir := benchDir(b, map[string]string{
		"script":     "#!/nonexistent/interpreter -x\n",
		"path.jsonc": `{"command": {"deny": ["git push"]}}`,
		"argv.jsonc": `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`,
	})
	n := max(b.N, 1000)
	run := func(mode string, argv ...string) float64 {
		args := append([]string{"-s", filepath.Join(dir, mode+".jsonc"), "--", "./execforms", "bench", strconv.Itoa(n)}, argv...)
		cmd := exec.Command(filepath.Join(bin, "fence"), args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		var ns float64
		if _, serr := fmt.Sscanf(string(out), "%g ns/exec", &ns); err != nil || serr != nil {
			b.Fatalf("%s %q: %v %v\n%s", mode, argv, err, serr, out)
		}
		return ns / 1000
	}
	b.ResetTimer()
	path := run("path", "/nonexistent/git", "status")
	b.ReportMetric(path, "path-us")
	b.ReportMetric(run("argv", "/nonexistent/git", "status"), "allowed-us")
	b.ReportMetric(run("argv", "./script"), "script-us")
	b.ReportMetric(run("argv", "/usr/bin/git", "push"), "refused-us")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkExecArgvRace measures the race argv mode does not close: a
// process execs /bin/echo public while another of its threads writes
// "secret" over that argument, again and again, under a policy denying
// echo secret. won-% is the share of execs that ran echo secret anyway
// (fence read "public", the kernel then read "secret"); refused-% those
// fence saw "secret" in.
func BenchmarkExecArgvRace(b *testing.B) {
	dir := benchDir(b, map[string]string{"race.jsonc": `{"command": {"deny": ["echo secret"], "runtimeExecPolicy": "argv"}}`})
	settings := filepath.Join(dir, "race.jsonc")
	n := max(b.N, 200)
	cmd := exec.Command(filepath.Join(bin, "fence"), "-s", settings, "--", "./execforms", "race", strconv.Itoa(n))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var won, total int
	for _, line := range strings.Split(string(out), "\n") {
		if _, serr := fmt.Sscanf(line, "%d of %d execs", &won, &total); serr == nil {
			break
		}
	}
	if err != nil || total != n {
		b.Fatalf("%v\n%s", err, out)
	}
	refused := strings.Count(string(out), `matches command.deny "echo secret"`)
	b.ReportMetric(100*float64(won)/float64(n), "won-%")
	b.ReportMetric(100*float64(refused)/float64(n), "refused-%")
	b.ReportMetric(0, "ns/op")
}

// benchDir makes a directory for a benchmark holding the execforms
// helper and files, removed when the benchmark ends.
func benchDir(b *testing.B, files map[string]string) string {
	helper, err := execformsBin()
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	h, err := os.ReadFile(helper)
	if err != nil {
		b.Fatal(err)
	}
	files["execforms"] = string(h)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
