package linux

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The handover between the supervisor and the sandbox child.
//
// The supervisor makes two socket pairs before it clones the child: the
// sync socket (SOCK_SEQPACKET, one message a packet) and the job socket
// (see jobcontrol_linux.go). Both ends of both are close-on-exec, so
// the command gets neither; the child keeps its ends (childFDs) and the
// supervisor closes them after the clone.
//
// Every message on the sync socket is a syncMsg; what it carries besides
// depends on its kind. In order:
//
//  1. supervisor -> child: msgMapsDone, once the supervisor has written
//     the child's uid and gid maps (the Landlock-only engine, which makes
//     no user namespace, sends it too). The child waits for it before
//     its first step.
//  2. child -> supervisor: either msgFailed, Step the index of the step
//     of the sandbox program that failed and Errno its errno, after
//     which the child exits (and the supervisor turns the pair into an
//     error naming what the step did: see program.failure); or msgReady,
//     with the descriptors the child made for the supervisor attached as
//     SCM_RIGHTS, Arg of them: the first Step are the proxies' listening
//     sockets in listenAddrs order, and the one after them, if any, is
//     the seccomp notify listener. The child then runs the command.
//  3. after msgReady, the messages of pid 1's duties (see pid1_linux.go).
//
// A child that dies before its report closes its end: the supervisor
// reads end of file and waits for its exit status.
type syncMsg struct {
	Kind  uint32
	Step  int32
	Errno int32
	Arg   uint32
}

// Kinds of syncMsg.
const (
	msgMapsDone uint32 = 1 + iota
	msgFailed
	msgReady

	// pid-1 messages, after msgReady (see pid1_linux.go).
	// On the sync socket:
	msgDial   // sup->child: Arg = port on the sandbox's loopback
	msgDialed // child->sup: Arg = 1 with the connected socket attached (SCM_RIGHTS), 0 none
	// On the job socket (job socket messages use the same header):
	msgJobStopped  // child->sup: Arg = stop signal, Step = 1 if the sandbox held the terminal
	msgJobContinue // sup->child: Arg = 1 to give the command the terminal
	msgJobStop     // sup->child: Arg = signal to stop the command's group with
	msgExecFailed  // child->sup: Step = candidate index (-1: none found), Errno, Arg = why<<16|perm
	msgPid1Failed  // child->sup: Step = pid-1 step, Errno (before the command started)
)

// childFDs are the descriptors the child keeps of the handover: its ends
// of the sync and the job sockets.
type childFDs struct{ sync, jobs int32 }

// syncMsgSize is the size of a syncMsg on the wire.
const syncMsgSize = int(unsafe.Sizeof(syncMsg{}))

// seqpacketPair makes a close-on-exec SOCK_SEQPACKET socket pair.
func seqpacketPair(what string) (a, b *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair for the %s: %w", what, err)
	}
	return os.NewFile(uintptr(fds[0]), what), os.NewFile(uintptr(fds[1]), what), nil
}

// sendSync sends m on the supervisor's end of the sync socket.
func sendSync(f *os.File, m syncMsg) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&m)), syncMsgSize)
	if _, err := unix.Write(int(f.Fd()), b); err != nil {
		return fmt.Errorf("write to the sandbox child: %w", err)
	}
	return nil
}

// readSync reads one message, and the descriptors attached to it, from
// the sync socket fd. ok is false at end of file (the child is gone) or
// on a short or unreadable message.
func readSync(fd int, maxFDs int) (m syncMsg, files []*os.File, ok bool) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&m)), syncMsgSize)
	oob := make([]byte, unix.CmsgSpace(4*maxFDs))
	n, oobn, _, _, err := unix.Recvmsg(fd, b, oob, unix.MSG_CMSG_CLOEXEC)
	if oobn > 0 {
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		for _, cm := range msgs {
			fds, _ := unix.ParseUnixRights(&cm)
			for _, fd := range fds {
				files = append(files, os.NewFile(uintptr(fd), "from the sandbox"))
			}
		}
	}
	if err != nil || n != syncMsgSize {
		closeFiles(files)
		return syncMsg{}, nil, false
	}
	return m, files, true
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
