//go:build linux

package linux_test

import "testing"

// devServerScript starts a server on the sandbox's loopback in the
// background, waits (a bounded number of polls) until it listens,
// connects to it from a second process, and writes to the sandbox's
// own /tmp.
const devServerScript = `./netprobe serve 8080 >serve.out &
for i in $(seq 200); do grep -q listening serve.out && break; sleep 0.05; done
./netprobe direct 127.0.0.1:8080
wait
cat serve.out
f=$(mktemp /tmp/dev-cache.XXXXXX) && echo cache >"$f" && cat "$f"`

// TestLocalDevServerTemplate: under local-dev-server a dev server the
// command starts on loopback is reached by a client inside the sandbox,
// the workspace and the sandbox's own /tmp are writable, and, since the template sets
// allowLocalBinding, a config on top that shares the host's network
// still lets servers listen (which the host network otherwise refuses).
func TestLocalDevServerTemplate(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name+"/own namespace", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "local-dev-server"}`)
			r := w.fence(t, "", nil, "-c", devServerScript)
			check(t, r, 0, "^connected\nlistening\nserved\ncache\n$", "")
		})
		t.Run(u.name+"/host network on top", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"extends": "local-dev-server", "network": {"allowedDomains": ["*"]}}`)
			r := w.fence(t, "", nil, "--", "./netprobe", "selfdial", "127.0.0.1")
			check(t, r, 0, "^127.0.0.1 hello\n$", "")
		})
	}
}
