// Package policy owns what fence allows: the fence.jsonc schema, loading
// and validating config files, following extends chains, merging them, the
// builtin templates, and lint checks on the result.
//
// It decides and never enforces: it starts no process, touches no kernel
// interface, and reads nothing but config files (through the FS it is
// given). The sandbox and platform packages turn its output into a running
// sandbox.
package policy
