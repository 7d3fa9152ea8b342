// Package darwin is fence's macOS backend. It compiles a policy into a
// Seatbelt (SBPL) profile and runs the command with
// /usr/bin/sandbox-exec. The compiler is plain Go that builds and is
// tested on every system: it reads an Input (plain data: the rules with
// their kinds, what the disk said of their links and binaries, the run's
// own values) and writes allows first, then denies that name every
// specific operation an allow grants. The runner's decisions (exit
// status, signals, job control, the log's predicate) are plain Go too;
// its supervision of the command builds on macOS and, for its tests on a
// real terminal, on Linux; only sandbox-exec, the exec watch and the log
// stream are macOS's alone.
//
// It enforces and never decides: what is allowed comes from the compiled
// policy, and what the profile cannot enforce exactly is refused.
package darwin
