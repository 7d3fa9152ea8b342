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
// the code template, whose network namespace is the sandbox's own (also
// offline, under --no-network), and an explicit allowLocalBinding false
// still refuses it.
func TestLocalBindingPrivateNamespace(t *testing.T) {
	tests := []struct {
		name, policy, stdout string
		args                 []string
	}{
		{"code template", `{"extends": "code"}`, selfDialBoth, nil},
		{"default", `{}`, selfDialBoth, nil},
		{"allowed", `{"network": {"allowLocalBinding": true}}`, selfDialBoth, nil},
		{"offline, with --no-network", `{"extends": "code"}`, selfDialBoth, []string{"--no-network"}},
		{"refused when false", `{"extends": "code", "network": {"allowLocalBinding": false}}`, `^error: listen tcp 127.0.0.1:0: bind: permission denied\n$`, nil},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.policy)
				r := w.fence(t, "", nil, append(tt.args, "--", "./netprobe", "selfdial", "127.0.0.1,::1")...)
				check(t, r, 0, tt.stdout, "")
			})
		}
	}
}

// TestLocalBindingSharedNetwork: where the command shares the host's
// network (allowedDomains "*", or the Landlock-only engine) a server
// would listen on the host's addresses, so bind() and a listen() that
// binds on its own are refused, each naming network.allowLocalBinding;
// on the host's network allowLocalBinding true lets them.
func TestLocalBindingSharedNetwork(t *testing.T) {
	const hostWhy = `the network is the host's \(network.allowedDomains holds "\*"\), so a server would listen on the host's addresses: set network.allowLocalBinding: true to let it`
	const script = "./netprobe selfdial 127.0.0.1; ./netprobe autolisten -"
	refused := "^error: listen tcp 127.0.0.1:0: bind: permission denied\nerror: listen: permission denied\n$"
	for _, u := range users(t) {
		t.Run(u.name+"/host network", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["*"]}}`)
			r := w.fence(t, "", nil, "-c", script)
			check(t, r, 0, refused, `(?s)fence: refused bind on TCP: `+hostWhy+`\n.*fence: refused listen on TCP: `+hostWhy+`\n`)
		})
		t.Run(u.name+"/host network, allowed", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["*"], "allowLocalBinding": true}}`)
			r := w.fence(t, "", nil, "-c", script)
			check(t, r, 0, "^127.0.0.1 hello\nlistening\n$", "")
		})
	}
	const llWhy = `without a network namespace, a socket would listen on the host's addresses, which the network policy does not allow`
	for _, u := range landlockOnlyUsers(t) {
		for _, policy := range []string{`{"extends": "code"}`, `{"network": {"allowLocalBinding": true}}`} {
			t.Run(u.name+"/Landlock-only/"+policy, func(t *testing.T) {
				w := landlockWorld(t, u, policy)
				r := w.landlockOnly(t, u, "-c", script)
				check(t, r, 0, refused, `(?s)fence: refused bind on TCP: `+llWhy+`\n.*fence: refused listen on TCP: `+llWhy+`\n`)
			})
		}
		// The host's network in this engine: the plan's TCP layer too.
		t.Run(u.name+"/Landlock-only/host network", func(t *testing.T) {
			w := landlockWorld(t, u, `{"network": {"allowedDomains": ["*"]}}`)
			r := w.landlockOnly(t, u, "-c", script)
			check(t, r, 0, refused, `(?s)fence: refused bind on TCP: `+hostWhy+`\n.*fence: refused listen on TCP: `+hostWhy+`\n`)
		})
		t.Run(u.name+"/Landlock-only/host network, allowed", func(t *testing.T) {
			w := landlockWorld(t, u, `{"network": {"allowedDomains": ["*"], "allowLocalBinding": true}}`)
			r := w.landlockOnly(t, u, "-c", script)
			check(t, r, 0, "^127.0.0.1 hello\nlistening\n$", "")
		})
	}
}
