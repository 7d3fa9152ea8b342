//go:build linux

package linux_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var buildClaudeJSON sync.Once

// claudeJSONHelper builds testdata/claudejson (a command that plants an
// MCP server in ~/.claude.json) and copies it into w's workspace, where
// the sandbox lets w's user run it.
func claudeJSONHelper(t *testing.T, w *world) string {
	t.Helper()
	built := filepath.Join(bin, "claudejson")
	buildClaudeJSON.Do(func() {
		cmd := exec.Command("go", "build", "-o", built, "./testdata/claudejson")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build claudejson: %v\n%s", err, out)
		}
	})
	b, err := os.ReadFile(built)
	must(t, err)
	p := filepath.Join(w.ws, "claudejson")
	must(t, os.WriteFile(p, b, 0o755))
	must(t, os.Chown(p, w.uid, w.uid))
	return p
}

// claudeJSONAfter reads w's ~/.claude.json after the run and checks that
// the planted server is gone, the start count the command raised is
// kept, the mode is what it was, and stderr names the key.
func claudeJSONAfter(t *testing.T, w *world, stderr string) {
	t.Helper()
	p := filepath.Join(w.home, ".claude.json")
	b, err := os.ReadFile(p)
	must(t, err)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("~/.claude.json after the run: %v\n%s", err, b)
	}
	if _, ok := doc["mcpServers"]; ok {
		t.Errorf("the planted MCP server is still there:\n%s", b)
	}
	if doc["numStartups"] != 2.0 {
		t.Errorf("numStartups %v, want the run's 2 kept:\n%s", doc["numStartups"], b)
	}
	if projects, _ := doc["projects"].(map[string]any); projects["/w"] == nil {
		t.Errorf("the project entry is gone:\n%s", b)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if want := "fence: warning: the run changed mcpServers (added) in ~/.claude.json"; !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
}

// plantClaudeJSON gives w a ~/.claude.json as Claude Code leaves it.
func plantClaudeJSON(t *testing.T, w *world) {
	t.Helper()
	p := filepath.Join(w.home, ".claude.json")
	must(t, os.WriteFile(p, []byte("{\n  \"numStartups\": 1,\n  \"projects\": {\n    \"/w\": {\n      \"allowedTools\": []\n    }\n  }\n}\n"), 0o600))
	must(t, os.Chown(p, w.uid, w.uid))
}

// TestClaudeJSONGuard runs, under `fence -t claude-code`, a command that
// plants an MCP server in ~/.claude.json (which the template makes
// writable) and counts a start: after the run the server is gone and the
// count kept, whether the command exits, is killed by --timeout or by
// Ctrl-C, as root and as an unprivileged uid.
func TestClaudeJSONGuard(t *testing.T) {
	for _, u := range users(t) {
		t.Run("exit/"+u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			plantClaudeJSON(t, w)
			helper := claudeJSONHelper(t, w)
			r := w.runIn(t, w.ws, nil, filepath.Join(bin, "fence"), "-t", "claude-code", "--", "sh", "-c", helper+" && exit 3")
			if r.code != 3 || r.stdout != "planted\n" {
				t.Fatalf("exit %d, want the command's 3\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			claudeJSONAfter(t, w, r.stderr)
		})
		t.Run("timeout/"+u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			plantClaudeJSON(t, w)
			helper := claudeJSONHelper(t, w)
			r := w.runIn(t, w.ws, nil, filepath.Join(bin, "fence"), "-t", "claude-code", "--timeout", "3s", "--", helper, "hang")
			if r.code != 124 || r.stdout != "planted\n" {
				t.Fatalf("exit %d, want 124\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			claudeJSONAfter(t, w, r.stderr)
		})
		t.Run("interrupt/"+u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			plantClaudeJSON(t, w)
			helper := claudeJSONHelper(t, w)
			r := interruptAfterPlant(t, w, filepath.Join(bin, "fence"), "-t", "claude-code", "--", helper, "hang")
			if r.code != 130 {
				t.Fatalf("exit %d, want 130\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			claudeJSONAfter(t, w, r.stderr)
		})
	}
	t.Run("nested", func(t *testing.T) {
		// Claude Code under fence, running a command under fence again:
		// the inner run puts the keys back, in place (the outer sandbox
		// binds the file in a read-only home), and the outer finds them
		// as they were.
		w := newWorld(t, os.Getuid(), `{}`)
		plantClaudeJSON(t, w)
		helper := claudeJSONHelper(t, w)
		fence := filepath.Join(bin, "fence")
		r := w.runIn(t, w.ws, nil, fence, "-t", "claude-code", "--", fence, "-t", "claude-code", "--", helper)
		if r.code != 0 || r.stdout != "planted\n" {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		claudeJSONAfter(t, w, r.stderr)
		if n := strings.Count(r.stderr, "the run changed mcpServers"); n != 1 || strings.Contains(r.stderr, "could not restore") {
			t.Errorf("want the inner run alone to restore:\n%s", r.stderr)
		}
	})
	t.Run("landlock-only", func(t *testing.T) {
		w := newWorld(t, os.Getuid(), `{"extends": "claude-code"}`)
		plantClaudeJSON(t, w)
		helper := claudeJSONHelper(t, w)
		r := w.withoutUserNS(t, "--", helper)
		if r.code != 0 || r.stdout != "planted\n" || !strings.Contains(r.stderr, "Landlock alone") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		claudeJSONAfter(t, w, r.stderr)
	})
}

// interruptAfterPlant runs argv as w's user in w.ws and sends fence
// SIGINT, as a terminal's Ctrl-C does, once the command has planted.
func interruptAfterPlant(t *testing.T, w *world, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.commandIn(ctx, w.ws, nil, argv...)
	out, err := cmd.StdoutPipe()
	must(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	must(t, cmd.Start())
	sc := bufio.NewScanner(out)
	var stdout strings.Builder
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		if sc.Text() == "planted" {
			must(t, cmd.Process.Signal(syscall.SIGINT))
		}
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), errb.String(), code}
}
