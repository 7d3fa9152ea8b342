package linux

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Without a network namespace, the Landlock-only engine's command shares
// the host's network: Landlock's TCP rules go by port alone, on any
// address, and say nothing of other sockets. The supervisor judges every
// connect() (see connectnotify_linux.go); the filter refuses with EACCES
// what would reach a destination without one:
//
//   - unix datagram sockets, by socket and socketpair: sendmsg gives
//     each datagram an address, which a filter cannot read, so one would
//     reach the host's /dev/log, the journal or a notify socket;
//   - with a filtered network, every inet socket but TCP (UDP to any
//     host, or to the host's DNS stub as a channel out; ICMP, raw, SCTP,
//     whose sendmsg associates; MPTCP, which Landlock does not cover),
//     every family but unix and netlink route, and TCP Fast Open, whose
//     sendto and sendmsg connect without connect();
//   - System V IPC and POSIX message queues, which are the host's
//     without an ipc namespace (EPERM).

const (
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	sockType  = 0xf // the type argument's bits that are not flags
)

// ipcCalls reach the host's System V IPC objects and message queues.
var ipcCalls = []uint32{
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
	unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
	unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND, unix.SYS_MQ_TIMEDRECEIVE,
	unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR,
}

// sendCalls are the calls that take flags, and where: MSG_FASTOPEN in
// them connects a TCP socket.
var sendCalls = []struct{ nr, flags uint32 }{
	{unix.SYS_SENDTO, offArg3}, {unix.SYS_SENDMSG, offArg2}, {unix.SYS_SENDMMSG, offArg3},
}

// netRules is the part of the filter that keeps sockets to what the
// supervisor judges, in the Landlock-only engine. filtered is a network
// of proxies ("none"); unixOnly, with it, leaves only unix sockets (no
// proxies to reach). The accumulator holds the syscall number on entry
// and on every way through.
func netRules(filtered, unixOnly bool) []bpf.Instruction {
	// noDgram returns for a unix socket of the type in arg1: stream and
	// seqpacket sockets only. A datagram carries its own address past
	// connect(), and the kernel makes SOCK_RAW (and any type it may add)
	// a datagram socket too.
	noDgram := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_STREAM, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_SEQPACKET, SkipTrue: 1},
		bpf.RetConstant{Val: retEACCES},
		bpf.RetConstant{Val: retAllow},
	}
	socket := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.AF_UNIX, SkipTrue: uint8(len(noDgram))},
	}
	socket = append(socket, noDgram...)
	switch {
	case !filtered:
		socket = append(socket, bpf.RetConstant{Val: retAllow})
	case unixOnly:
		socket = append(socket, bpf.RetConstant{Val: retEACCES})
	default:
		socket = append(socket,
			// netlink: route only (what getaddrinfo and ip read)
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.AF_NETLINK, SkipTrue: 4},
			bpf.LoadAbsolute{Off: offArg2, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.NETLINK_ROUTE, SkipFalse: 1},
			bpf.RetConstant{Val: retAllow},
			bpf.RetConstant{Val: retEACCES},
			// inet: TCP only
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET, SkipTrue: 1},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.AF_INET6, SkipTrue: 8},
			bpf.LoadAbsolute{Off: offArg1, Size: 4},
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockType},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_STREAM, SkipFalse: 3},
			bpf.LoadAbsolute{Off: offArg2, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 2},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.IPPROTO_TCP, SkipTrue: 1},
			bpf.RetConstant{Val: retEACCES},
			bpf.RetConstant{Val: retAllow},
			// every other family
			bpf.RetConstant{Val: retEACCES},
		)
	}
	socketpair := append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: offArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.AF_UNIX, SkipTrue: uint8(len(noDgram))},
	}, noDgram...)
	socketpair = append(socketpair, bpf.RetConstant{Val: retAllow})
	prog := append(syscallBlock(unix.SYS_SOCKET, socket), syscallBlock(unix.SYS_SOCKETPAIR, socketpair)...)
	if filtered {
		for _, c := range sendCalls {
			prog = append(prog, syscallBlock(c.nr, []bpf.Instruction{
				bpf.LoadAbsolute{Off: c.flags, Size: 4},
				bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.MSG_FASTOPEN, SkipFalse: 1},
				bpf.RetConstant{Val: retEACCES},
				bpf.RetConstant{Val: retAllow},
			})...)
		}
	}
	for _, nr := range ipcCalls {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1}, bpf.RetConstant{Val: retEPERM})
	}
	return prog
}

// syscallBlock runs body, which returns on every way through, for the
// system call nr, and skips it for any other.
func syscallBlock(nr uint32, body []bpf.Instruction) []bpf.Instruction {
	return append([]bpf.Instruction{bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: uint8(len(body))}}, body...)
}
