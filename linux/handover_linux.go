package linux

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The status channel is a socket pair: the init sends one status byte,
// with the proxies' listening sockets attached when it made them.

func statusPair() (supervisor, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "status"), os.NewFile(uintptr(fds[1]), "status"), nil
}

// sendStatus tells the supervisor, over the status socket fd, how
// setting up went, handing over files. Unless keep, it closes fd.
func sendStatus(fd int, status byte, files []*os.File, keep bool) error {
	var rights []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		rights = unix.UnixRights(fds...)
	}
	err := unix.Sendmsg(fd, []byte{status}, rights, nil, 0)
	for _, f := range files {
		f.Close()
	}
	if !keep {
		unix.Close(fd)
	}
	if err != nil {
		return fmt.Errorf("report to supervisor: %w", err)
	}
	return nil
}

// readStatus waits for the init's status byte (0 when the init died
// first) and the descriptors sent with it.
func readStatus(f *os.File) (byte, []*os.File) {
	return readStatusFD(int(f.Fd()))
}

func readStatusFD(fd int) (byte, []*os.File) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*(maxListeners+2))) // and the job and notify sockets
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n == 0 {
		return 0, nil
	}
	var files []*os.File
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		fds, _ := unix.ParseUnixRights(&m)
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "listener"))
		}
	}
	return buf[0], files
}

// maxListeners bounds the descriptors one status message can carry: the
