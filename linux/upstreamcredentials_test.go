//go:build linux

package linux_test

import (
	"os"
	"testing"
)

// credentialsPolicy forwards to an upstream with a password, and extends
// a file that also holds one (overridden, but still a secret) and,
// through it, a file that holds none.
const credentialsPolicy = `{"extends": "./inner.jsonc", "network": {"defaultAction": "proxy", "upstreamProxy": "http://alice:s3cr%40t@127.0.0.1:1"}}`

// credentialsScript reads each config file of the chain from inside.
const credentialsScript = `for f in policy.jsonc inner.jsonc plain.jsonc; do cat "../$f" >/dev/null 2>&1 && echo "$f readable" || echo "$f unreadable"; done`

const credentialsWant = "^policy.jsonc unreadable\ninner.jsonc unreadable\nplain.jsonc readable\n$"

// plantCredentialChain writes the files credentialsPolicy extends.
func plantCredentialChain(t *testing.T, w *world) {
	t.Helper()
	w.plant(t, map[string]string{
		"inner.jsonc": `{"extends": "./plain.jsonc", "network": {"upstreamProxy": "http://bob:hunter2@127.0.0.1:2"}}`,
		"plain.jsonc": `{"filesystem": {"allowWrite": ["."]}}`,
	})
}

// TestUpstreamCredentialsUnreadable: every config file of the chain whose
// network.upstreamProxy carries credentials is unreadable inside the
// sandbox (mandatory.upstreamCredentials, which check read names); a
// file of the chain without them stays readable.
func TestUpstreamCredentialsUnreadable(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, credentialsPolicy)
			plantCredentialChain(t, w)
			r := w.fence(t, "", nil, "-c", credentialsScript)
			check(t, r, 0, credentialsWant, "")
			r = w.fence(t, "", nil, "check", "read", w.base+"/inner.jsonc")
			check(t, r, 1, `denied read .*/inner\.jsonc: mandatory\.upstreamCredentials`, "")
		})
	}
}

// TestUpstreamCredentialsUnreadableLandlockOnly: the same with Landlock
// alone (no user namespace).
func TestUpstreamCredentialsUnreadableLandlockOnly(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to turn user namespaces off in a namespace of its own")
	}
	w := newWorld(t, os.Getuid(), credentialsPolicy)
	plantCredentialChain(t, w)
	r := w.withoutUserNS(t, "-c", credentialsScript)
	check(t, r, 0, credentialsWant, "")
}
