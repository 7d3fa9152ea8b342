package darwin

// execWatch, on Linux (for the runner's tests), has no kqueue: it knows
// only what the process's name tells when the watch begins.
type execWatch struct{ sight execSight }

func watchExec(pid int) *execWatch {
	_, comm, zombie, read := processInfo(pid)
	return &execWatch{sight: execSight{read: read, comm: comm, zombie: zombie}}
}

func (w *execWatch) execd() bool { return w.sight.execd() }
