package linux

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// handleBind answers a bind notification. Landlock refuses bind() on
// TCP where the plan forbids servers (a filtered network without a
// namespace, or the host's network without network.allowLocalBinding),
// but the program only sees EACCES: fence names the rule here, and
// lets every other bind go on to the kernel, which decides. Going on is
// safe whatever the caller changes meanwhile: Landlock still judges the
// bind that happens.
func (j *connectJudge) handleBind(fd uintptr, n *seccompNotif) {
	resp := seccompNotifResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	tcp := j.tcpSocket(int(n.Pid), int(int32(n.Data.Args[0])))
	if !notifValid(fd, n.ID) {
		return
	}
	if tcp && j.refusesTCPServers() {
		j.refuseCall("bind", "tcp", "bind on TCP", j.serverVerdict())
		resp = seccompNotifResp{ID: n.ID, Val: -1, Error: -int32(unix.EACCES)}
	}
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// tcpSocket reports whether descriptor fd of thread tid is a TCP socket;
// false when fence cannot see it (the kernel then decides alone).
func (j *connectJudge) tcpSocket(tid, fd int) bool {
	sock, err := pidGetFD(tid, fd)
	if err != nil {
		return false
	}
	defer unix.Close(sock)
	domain, err1 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	proto, err3 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	return err1 == nil && err2 == nil && err3 == nil && (domain == unix.AF_INET || domain == unix.AF_INET6) &&
		typ == unix.SOCK_STREAM && proto == unix.IPPROTO_TCP
}

// refusesTCPServers reports whether nothing may listen on TCP: a
// filtered network without a namespace, or the host's network without
// network.allowLocalBinding.
func (j *connectJudge) refusesTCPServers() bool {
	return j.rules.Filtered || j.landlock.TCP.RefusesListen()
}

// serverVerdict is why a TCP server is refused.
func (j *connectJudge) serverVerdict() verdict {
	if j.rules.Filtered {
		return verdict{unix.EACCES, "network.allowLocalBinding",
			"without a network namespace, a socket would listen on the host's addresses, which the network policy does not allow"}
	}
	return verdict{unix.EACCES, "network.allowLocalBinding",
		"the network is the host's (network.allowedDomains holds \"*\"), so a server would listen on the host's addresses: set network.allowLocalBinding: true to let it"}
}
