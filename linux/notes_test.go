//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyConfigNote runs under a project fence.jsonc that holds no
// config: the run says so on one line, naming the file and what applies
// instead, and the builtin default is what the sandbox enforces. A file
// holding "{}" is a config, and gets no note.
func TestEmptyConfigNote(t *testing.T) {
	tests := []struct {
		name, content string
		note          bool
	}{
		{"zero bytes", "", true},
		{"only comments", "// filled in later\n/* nothing yet */\n\n", true},
		{"empty object", "{}\n", false},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				project := filepath.Join(w.ws, "fence.jsonc")
				must(t, os.WriteFile(project, []byte(tt.content), 0o644))
				must(t, os.Lchown(project, u.uid, u.uid))
				fence := filepath.Join(bin, "fence")
				if r := w.runIn(t, w.ws, nil, fence, "config", "trust"); r.code != 0 {
					t.Fatalf("config trust: exit %d\n%s", r.code, r.stderr)
				}
				r := w.runIn(t, w.ws, nil, fence, "-c", `cat README && echo x > new.txt`)
				check(t, r, 1, `^readme\n$`, `new.txt: Read-only file system`)
				want := "fence: note: " + project + " is empty (nothing but whitespace and comments), so the builtin default applies instead: nothing writable, no network\n"
				if got := strings.Count(r.stderr, want); got != map[bool]int{true: 1, false: 0}[tt.note] {
					t.Errorf("stderr holds the note %d times, want it %v:\n%s", got, tt.note, r.stderr)
				}
				if !tt.note && strings.Contains(r.stderr, "fence: note:") {
					t.Errorf("a note for a config:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestSSHWritableWarning runs policies that do and do not let the command
// write ~/.ssh: the run warns exactly when the command can, naming the
// rule, and the command's write shows the warning true.
func TestSSHWritableWarning(t *testing.T) {
	tests := []struct {
		name, policy string
		warns        bool
	}{
		{"home writable", `{"filesystem": {"allowWrite": [".", "~"]}}`, true},
		{"the directory itself", `{"filesystem": {"allowWrite": ["~/.ssh"]}}`, true},
		{"an ancestor far up", `{"filesystem": {"allowWrite": ["/var"]}}`, true},
		{"keys denied, directory open", `{"filesystem": {"allowWrite": ["~"], "denyWrite": ["~/.ssh/id_*"]}}`, true},
		{"home writable, ssh denied", `{"filesystem": {"allowWrite": ["~"], "denyWrite": ["~/.ssh"]}}`, false},
		{"workspace only", `{"filesystem": {"allowWrite": ["."]}}`, false},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, "-c", `echo planted > ~/.ssh/planted && echo wrote`)
				wrote := r.code == 0 && r.stdout == "wrote\n"
				if wrote != tt.warns {
					t.Fatalf("the command wrote ~/.ssh: %v, want %v (exit %d)\n%s", wrote, tt.warns, r.code, r.stderr)
				}
				warned := strings.Contains(r.stderr, "fence: warning: filesystem.allowWrite ") && strings.Contains(r.stderr, ": makes ~/.ssh writable: the command can replace the keys and known_hosts that ssh trusts outside the sandbox; narrow the rule or add \"~/.ssh\" to filesystem.denyWrite (settings file: "+w.settings+":1:")
				if warned != tt.warns || strings.Count(r.stderr, "makes ~/.ssh writable") > 1 {
					t.Errorf("warned %v, want %v:\n%s", warned, tt.warns, r.stderr)
				}
			})
		}
	}
}
