package linux

import (
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handleListen answers a listen notification. Landlock refuses bind()
// to any TCP port, but listen() on an unbound socket binds one of its
// own choosing, on every address of the host: with a filtered network,
// or on the host's network without network.allowLocalBinding, nothing
// may listen on TCP. A unix socket listens, on fence's
// duplicate, and fence records it as the sandbox's: the only unix
// sockets the command may connect to that the policy does not list.
func (j *connectJudge) handleListen(fd uintptr, n *seccompNotif) {
	resp := seccompNotifResp{ID: n.ID}
	errno, ok := j.listen(fd, n)
	if !ok {
		return
	}
	if errno != 0 {
		resp.Val, resp.Error = -1, -int32(errno)
	}
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

func (j *connectJudge) listen(fd uintptr, n *seccompNotif) (errno unix.Errno, ok bool) {
	sock, err := pidGetFD(int(n.Pid), int(int32(n.Data.Args[0])))
	if errors.Is(err, unix.EPERM) { // a non-dumpable caller, fence not root
		if !notifValid(fd, n.ID) {
			return 0, false
		}
		j.refuseCall("listen", "socket", "listen on a socket fence could not see", verdict{unix.EACCES, "network", err.Error()})
		return unix.EACCES, true
	}
	if err != nil {
		return errnoOf(err), notifValid(fd, n.ID)
	}
	defer unix.Close(sock)
	if !notifValid(fd, n.ID) {
		return 0, false
	}
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return errnoOf(err), true // ENOTSOCK
	}
	if (domain == unix.AF_INET || domain == unix.AF_INET6) && j.refusesTCPServers() {
		j.refuseCall("listen", "tcp", "listen on TCP", j.serverVerdict())
		return unix.EACCES, true
	}
	if j.rules.Filtered && boundAbstract(sock) {
		j.refuseCall("listen", "unix", "listen on an abstract unix socket", verdict{unix.EACCES, "network.allowLocalBinding",
			"without a network namespace, the abstract names are the host's: a host client dialling the name (X11's @/tmp/.X11-unix/X0, say) would reach the sandbox"})
		return unix.EACCES, true
	}
	if err := unix.Listen(sock, int(int32(n.Data.Args[1]))); err != nil {
		return errnoOf(err), true
	}
	j.recordListener(sock, int(n.Pid))
	return 0, true
}

// recordListener notes the unix socket sock, which fence has just put
// to listen for thread tid, as the sandbox's: its credentials are then
// fence's. A path bound relative to another directory than the
// caller's present one is not found, and a connection to it refused.
func (j *connectJudge) recordListener(sock, tid int) {
	sa, err := unix.Getsockname(sock)
	u, ok := sa.(*unix.SockaddrUnix)
	if err != nil || !ok || u.Name == "" {
		return
	}
	key := u.Name // "@" and the name, for an abstract socket
	if !strings.HasPrefix(u.Name, "@") {
		p := u.Name
		if !strings.HasPrefix(p, "/") {
			p = "/proc/" + strconv.Itoa(tid) + "/cwd/" + p
		}
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return
		}
		key = listenKey(keyOf(&st))
	}
	j.mu.Lock()
	j.listening[key] = true
	j.mu.Unlock()
}

func (j *connectJudge) listenedFor(key string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.listening[key]
}

// boundAbstract reports whether sock is bound to a name in the abstract
// namespace. An unbound socket that listens gets a random one
// (autobind), which no host client knows to dial.
func boundAbstract(sock int) bool {
	sa, err := unix.Getsockname(sock)
	u, ok := sa.(*unix.SockaddrUnix)
	return err == nil && ok && strings.HasPrefix(u.Name, "@")
}
