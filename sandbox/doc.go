// Package sandbox owns running a command under a resolved policy in the
// parts that do not depend on the operating system: the exit code
// contract, and (as the backends land) plan building, environment
// sanitising and the network proxies.
//
// It must not decide policy (that is package policy) and must not make
// platform syscalls (those live in the linux and darwin packages).
package sandbox
