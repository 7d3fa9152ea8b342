//go:build linux

package linux_test

import (
	"testing"
)

// selfDialBoth is what netprobe selfdial prints when it can listen on
// both loopback addresses and connect to itself there.
const selfDialBoth = "^127.0.0.1 hello; ::1 hello\n$"

// TestLocalBindingPrivateNamespace: a test that starts a local server
// (httptest listens on 127.0.0.1:0 or [::1]:0 and dials it) works under
// the code template, whose network namespace is the sandbox's own, and
// an explicit allowLocalBinding false still refuses it.
func TestLocalBindingPrivateNamespace(t *testing.T) {
	tests := []struct{ name, policy, stdout string }{
		{"code template", `{"extends": "code"}`, selfDialBoth},
		{"default", `{}`, selfDialBoth},
		{"allowed", `{"network": {"allowLocalBinding": true}}`, selfDialBoth},
		{"refused when false", `{"extends": "code", "network": {"allowLocalBinding": false}}`, `^error: listen tcp 127.0.0.1:0: bind: permission denied\n$`},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, "--", "./netprobe", "selfdial", "127.0.0.1,::1")
				check(t, r, 0, tt.stdout, "")
			})
		}
	}
}
