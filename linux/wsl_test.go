//go:build linux

package linux_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// onFakeWSL runs argv as w's user in w.ws with the kernel's release and
// version files covered, in a mount namespace of their own, by ones a
// WSL 2 kernel writes: fence reads what WSL's kernel says, from where
// the kernel says it. No sandbox starts there: the kernel refuses a
// fresh /proc where files of the host's /proc are covered.
func (w *world) onFakeWSL(t *testing.T, argv ...string) result {
	t.Helper()
	release := filepath.Join(w.base, "osrelease")
	version := filepath.Join(w.base, "version")
	must(t, os.WriteFile(release, []byte("5.15.167.4-microsoft-standard-WSL2\n"), 0o644))
	must(t, os.WriteFile(version, []byte("Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0) #1 SMP\n"), 0o644))
	script := `mount --bind "$1" /proc/sys/kernel/osrelease && mount --bind "$2" /proc/version && shift 2 && exec "$@"`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.commandIn(ctx, w.ws, nil, argv...)
	cmd.Args = append([]string{"unshare", "-m", "sh", "-c", script, "sh", release, version}, cmd.Args...)
	cmd.Path = "/usr/bin/unshare"
	return runResult(t, cmd)
}

// TestWSLInterop: on a kernel that says it is WSL's, /init (the interop
// binary) is executable under defaultDenyRead, named by
// filesystem.wslInterop in fence check and config show --effective,
// unless the config sets wslInterop false. On this kernel, which is not
// WSL's, true allows nothing and a run says so.
func TestWSLInterop(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to cover the kernel's release file in a mount namespace")
	}
	fence := filepath.Join(bin, "fence")
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"defaultDenyRead": true}}`)
			off := filepath.Join(w.base, "off.jsonc")
			on := filepath.Join(w.base, "on.jsonc")
			must(t, os.WriteFile(off, []byte(`{"filesystem": {"defaultDenyRead": true, "wslInterop": false}}`), 0o644))
			must(t, os.WriteFile(on, []byte(`{"filesystem": {"defaultDenyRead": true, "wslInterop": true}}`), 0o644))

			allowed := `^allowed exec /init: filesystem\.wslInterop \(fence \(the kernel is WSL's\)\)\n$`
			check(t, w.onFakeWSL(t, fence, "-s", w.settings, "check", "exec", "/init"), 0, allowed, "")
			r := w.onFakeWSL(t, fence, "-s", w.settings, "config", "show", "--effective", "--json")
			check(t, r, 0, `(?s)"allowExecute": \[\s*\{\s*"value": "/init",\s*"rule": "filesystem\.wslInterop"`, "")
			check(t, w.onFakeWSL(t, fence, "-s", off, "check", "exec", "/init"), 1, `^denied exec /init: filesystem\.defaultDenyRead`, "")

			// fence doctor says what it found (its sandbox probe cannot
			// start there, see onFakeWSL).
			r = w.onFakeWSL(t, fence, "doctor")
			if !regexpMatch(`(?m)^wsl +ok +WSL \(the kernel's release says so\): /init, the interop binary, is executable unless filesystem\.wslInterop is false$`, r.stdout) {
				t.Errorf("fence doctor on WSL:\n%s", r.stdout)
			}

			// The same on this kernel, not WSL's.
			check(t, w.fence(t, "", nil, "check", "exec", "/init"), 1, `^denied exec /init: filesystem\.defaultDenyRead`, "")
			r = w.runIn(t, w.ws, nil, fence, "-s", on, "-c", "echo ran")
			check(t, r, 0, `^ran\n$`, regexp.QuoteMeta("fence: warning: filesystem.wslInterop is true, but this kernel is not WSL's"))
			check(t, w.runIn(t, w.ws, nil, fence, "-s", on, "check", "exec", "/init"), 1, `^denied exec /init: filesystem\.defaultDenyRead`, "")
		})
	}
}
