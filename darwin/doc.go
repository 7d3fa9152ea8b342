// Package darwin is fence's macOS backend. It compiles a policy into a
// Seatbelt (SBPL) profile and runs the command with
// /usr/bin/sandbox-exec. The compiler is plain Go that builds and is
// tested on every system; only the runner is built for macOS.
//
// It enforces and never decides: what is allowed comes from the compiled
// policy.
package darwin
