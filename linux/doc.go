// Package linux is fence's Linux backend. It runs a sandbox.Plan: the
// supervisor re-executes fence as the init of new user, mount, pid, ipc,
// uts and (unless the network is the host's) network namespaces; the init
// builds the filesystem view with mounts, applies Landlock, drops every
// capability, installs a seccomp filter, and starts the command.
//
// It enforces and never decides: what is allowed comes from the plan.
// Files that make syscalls are built for Linux only; on other systems Run
// returns an error.
package linux
