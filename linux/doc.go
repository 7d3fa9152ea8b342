// Package linux is fence's Linux backend. It runs a sandbox.Plan: the
// supervisor lowers the plan into a sandbox program (system calls with
// their arguments prepared in memory: program_*.go) and clones a child
// into new user, mount, pid, ipc, uts and (unless the network is the
// host's) network namespaces; the child, with no Go runtime of its own,
// runs the program with raw system calls (child_linux.go): it builds the
// filesystem view with mounts, applies Landlock, drops every capability,
// installs a seccomp filter, and then, as pid 1, starts the command
// (pid1_linux.go). The handover between the two is typed
// (sync_linux.go).
//
// It enforces and never decides: what is allowed comes from the plan.
// Files that make syscalls are built for Linux only; on other systems Run
// returns an error.
package linux
