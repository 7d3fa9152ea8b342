package sandbox

// ExitFenceError is fence's exit code when fence itself fails before the
// command starts: a bad config, a bad flag, a sandbox it cannot build.
// Otherwise fence exits with the command's own status (126 when the command
// cannot be executed, 127 when it is not found, 128+N when it is killed by
// signal N).
const ExitFenceError = 125

// ExitNotExecutable and ExitNotFound are fence's exit codes when the
// command cannot be started, as a shell's.
const (
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// ExitTimeout is fence's exit code when limits.timeout (--timeout) ended
// the sandbox, as timeout(1)'s.
const ExitTimeout = 124
