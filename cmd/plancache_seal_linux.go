package cmd

import (
	"crypto/rand"
	"fmt"

	"golang.org/x/sys/unix"
)

// On Linux the key entries are sealed with lives in the user's kernel
// keyring, as a "user" key fence makes on first use, readable by this
// user: no sandbox can read it, since the seccomp filter of both engines
// refuses keyctl, add_key and request_key, and no file holds it for an
// agent's tools to read or a policy to expose. It lasts as long as the
// user's keyring (while the user has processes); a new one only costs
// the cache's entries.

// planCacheKeyDesc names the key in the keyring.
const planCacheKeyDesc = "fence:plan-cache"

// The key's permissions: all to a possessor, and view, read and search
// to the user, so that a fence of a session without the user keyring
// linked reads it too.
const planCacheKeyPerm = 0x3f000000 | 0x00010000 | 0x00020000 | 0x00080000

// sealKey returns the user's plan cache key, making it first when create
// is set and there is none.
func sealKey(create bool) ([]byte, error) {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", planCacheKeyDesc, 0)
	if err != nil && create {
		key := make([]byte, planCacheKeySize)
		rand.Read(key)
		id, err = unix.AddKey("user", planCacheKeyDesc, key, unix.KEY_SPEC_USER_KEYRING)
		if err == nil {
			err = unix.KeyctlSetperm(id, planCacheKeyPerm)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the plan cache key in the user keyring: %w", err)
	}
	buf := make([]byte, 2*planCacheKeySize)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		return nil, fmt.Errorf("read the plan cache key: %w", err)
	}
	if n != planCacheKeySize {
		return nil, fmt.Errorf("the plan cache key in the user keyring is %d bytes, not one fence made", n)
	}
	return buf[:n], nil
}
