//go:build linux

package linux_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStartNoFileLimit: a command with no open-files limit of its own
// starts with the soft limit fence was started with, not the one fence's
// Go runtime raised it to for itself; one with --limit-nofile gets that.
func TestStartNoFileLimit(t *testing.T) {
	for _, u := range users(t) {
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"caller's limit", []string{"-c", "ulimit -Sn"}, "^77\n$"},
			{"the flag's limit", []string{"--limit-nofile", "50", "-c", "ulimit -Sn"}, "^50\n$"},
		} {
			t.Run(u.name+"/"+tc.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				fence := w.asUser(append([]string{filepath.Join(bin, "fence"), "-s", w.settings}, tc.args...)...)
				cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `ulimit -Sn 77 && exec "$@"`, "sh"}, fence...)...)
				cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
				check(t, runResult(t, cmd), 0, tc.want, "")
			})
		}
	}
}
