// Command floor is the least a sandbox built the way fence is can do: a
// Go supervisor starts itself again as the init of new user, mount, pid,
// network, ipc and uts namespaces, and the init runs the command as its
// child (pid 1 must reap) and exits with its status. There is no policy,
// no mount, no Landlock and no seccomp. The benchmarks time it next to
// fence, so that what fence's own work costs can be told from what the
// design costs. With no arguments it exits at once: the cost of starting
// a Go program.
package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

const initArg0 = "floor-init"

func main() {
	if len(os.Args) < 2 {
		return
	}
	if os.Args[0] == initArg0 {
		os.Exit(run(exec.Command(os.Args[1], os.Args[2:]...)))
	}
	attr := &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS,
		Pdeathsig:   unix.SIGKILL,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	init := &exec.Cmd{Path: "/proc/self/exe", Args: append([]string{initArg0}, os.Args[1:]...), SysProcAttr: attr}
	os.Exit(run(init))
}

// run runs cmd with this process's standard streams and returns its exit
// status (125 when it could not start).
func run(cmd *exec.Cmd) int {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		os.Stderr.WriteString("floor: " + err.Error() + "\n")
		return 125
	}
}
