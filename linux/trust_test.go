//go:build linux

package linux_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestClass4PlantedConfigNeedsTrust: a command writes sub/fence.jsonc,
// which discovery does not watch from the working directory, and a trust
// record vouching for it; the next run started in sub/ (without -s, so
// the policy is what discovery finds) refuses with 125 and names the
// file, until the user trusts it. A later change to the trusted file is
// refused the same way.
func TestClass4PlantedConfigNeedsTrust(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
			planted := `{"filesystem": {"allowWrite": ["/var/tmp", "~"]}}`
			sub := filepath.Join(w.ws, "sub")
			path := filepath.Join(sub, "fence.jsonc")
			sum := sha256.Sum256([]byte(planted))
			record := fmt.Sprintf(`{"version": 1, "files": {%q: {"sha256": %q}}}`, path, hex.EncodeToString(sum[:]))
			attack := fmt.Sprintf(`printf '%%s' '%s' > sub/fence.jsonc && echo planted
{ mkdir -p ~/.config/fence && printf '%%s' '%s' > ~/.config/fence/trust.json; } 2>/dev/null || echo record-protected`, planted, record)
			check(t, w.fence(t, "", nil, "-c", attack), 0, `^planted\nrecord-protected\n$`, "")

			pwned := filepath.Join(w.outside, "pwned")
			refused := regexp.QuoteMeta(fmt.Sprintf("fence: error: %q is not trusted: a sandboxed command may have written it", path)) +
				`\n.*fence config show\n.*` + regexp.QuoteMeta("fence config trust "+path)
			check(t, w.discover(t, sub, "--", "touch", pwned), 125, "^$", refused)
			check(t, w.discover(t, sub, "check", "write", pwned), 125, "^$", refused)
			if _, err := os.Stat(pwned); err == nil {
				t.Fatalf("the run under the planted config wrote %s", pwned)
			}

			check(t, w.discover(t, sub, "config", "trust"), 0, "", regexp.QuoteMeta("fence: trusted "+path+" (sha256 "))
			check(t, w.discover(t, sub, "-c", "echo ran"), 0, `^ran\n$`, "")

			// Run from the workspace, the command can still write sub/;
			// the next run in sub/ sees the change.
			check(t, w.fence(t, "", nil, "-c", `echo '{"filesystem": {"allowWrite": ["/var"]}}' > sub/fence.jsonc`), 0, "", "")
			check(t, w.discover(t, sub, "-c", "echo ran"), 125, "^$", regexp.QuoteMeta(fmt.Sprintf("%q changed since you trusted it", path)))
		})
	}
}

// discover runs fence with args in dir, as w's user, without -s: the
// policy is whatever discovery finds from dir.
func (w *world) discover(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return w.runIn(t, dir, nil, append([]string{filepath.Join(bin, "fence")}, args...)...)
}
