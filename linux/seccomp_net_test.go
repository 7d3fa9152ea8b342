//go:build linux

package linux

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSeccompNetRules runs the filter in x/net/bpf's interpreter on the
// socket calls the Landlock-only engine judges: unix datagram sockets
// are refused in every network; with a filtered one, every inet socket
// but TCP, every family but unix and netlink route, and TCP Fast Open;
// System V IPC always. The namespace engine's filter lets them through.
func TestSeccompNetRules(t *testing.T) {
	const (
		allow  = retAllow
		eacces = retEACCES
		eperm  = retEPERM
	)
	type call struct {
		name string
		nr   uint32
		args [4]uint32
	}
	var (
		unixStream   = call{"socket unix stream", unix.SYS_SOCKET, [4]uint32{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}}
		unixSeq      = call{"socket unix seqpacket", unix.SYS_SOCKET, [4]uint32{unix.AF_UNIX, unix.SOCK_SEQPACKET}}
		unixDgram    = call{"socket unix dgram", unix.SYS_SOCKET, [4]uint32{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_NONBLOCK}}
		pairStream   = call{"socketpair unix stream", unix.SYS_SOCKETPAIR, [4]uint32{unix.AF_UNIX, unix.SOCK_STREAM}}
		pairDgram    = call{"socketpair unix dgram", unix.SYS_SOCKETPAIR, [4]uint32{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}}
		unixRaw      = call{"socket unix raw (a datagram socket to the kernel)", unix.SYS_SOCKET, [4]uint32{unix.AF_UNIX, unix.SOCK_RAW}}
		pairRaw      = call{"socketpair unix raw", unix.SYS_SOCKETPAIR, [4]uint32{unix.AF_UNIX, unix.SOCK_RAW | unix.SOCK_NONBLOCK}}
		pairSeq      = call{"socketpair unix seqpacket", unix.SYS_SOCKETPAIR, [4]uint32{unix.AF_UNIX, unix.SOCK_SEQPACKET}}
		tcp4         = call{"socket inet tcp", unix.SYS_SOCKET, [4]uint32{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_NONBLOCK, 0}}
		tcp6         = call{"socket inet6 IPPROTO_TCP", unix.SYS_SOCKET, [4]uint32{unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP}}
		mptcp        = call{"socket inet mptcp", unix.SYS_SOCKET, [4]uint32{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}}
		sctp         = call{"socket inet sctp", unix.SYS_SOCKET, [4]uint32{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP}}
		udp4         = call{"socket inet udp", unix.SYS_SOCKET, [4]uint32{unix.AF_INET, unix.SOCK_DGRAM, 0}}
		udp6         = call{"socket inet6 udp", unix.SYS_SOCKET, [4]uint32{unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0}}
		icmp         = call{"socket inet icmp", unix.SYS_SOCKET, [4]uint32{unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP}}
		raw          = call{"socket inet raw", unix.SYS_SOCKET, [4]uint32{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW}}
		seq6         = call{"socket inet6 seqpacket", unix.SYS_SOCKET, [4]uint32{unix.AF_INET6, unix.SOCK_SEQPACKET, 0}}
		packet       = call{"socket packet", unix.SYS_SOCKET, [4]uint32{unix.AF_PACKET, unix.SOCK_RAW, 0}}
		vsock        = call{"socket vsock", unix.SYS_SOCKET, [4]uint32{unix.AF_VSOCK, unix.SOCK_STREAM, 0}}
		nlRoute      = call{"socket netlink route", unix.SYS_SOCKET, [4]uint32{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}}
		nlOther      = call{"socket netlink kobject", unix.SYS_SOCKET, [4]uint32{unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT}}
		sendto       = call{"sendto", unix.SYS_SENDTO, [4]uint32{3, 0, 1, unix.MSG_NOSIGNAL}}
		sendtoTFO    = call{"sendto MSG_FASTOPEN", unix.SYS_SENDTO, [4]uint32{3, 0, 1, unix.MSG_FASTOPEN | unix.MSG_NOSIGNAL}}
		sendmsgTFO   = call{"sendmsg MSG_FASTOPEN", unix.SYS_SENDMSG, [4]uint32{3, 0, unix.MSG_FASTOPEN}}
		sendmmsgTFO  = call{"sendmmsg MSG_FASTOPEN", unix.SYS_SENDMMSG, [4]uint32{3, 0, 1, unix.MSG_FASTOPEN}}
		sendmsgPlain = call{"sendmsg", unix.SYS_SENDMSG, [4]uint32{3, 0, unix.MSG_DONTWAIT}}
		shmget       = call{"shmget", unix.SYS_SHMGET, [4]uint32{}}
		semop        = call{"semop", unix.SYS_SEMOP, [4]uint32{}}
		mqOpen       = call{"mq_open", unix.SYS_MQ_OPEN, [4]uint32{}}
		connect      = call{"connect", unix.SYS_CONNECT, [4]uint32{3}}
	)
	all := []call{unixStream, unixSeq, unixDgram, pairStream, pairDgram, unixRaw, pairRaw, pairSeq, tcp4, tcp6, mptcp, sctp, udp4, udp6, icmp, raw, seq6, packet, vsock,
		nlRoute, nlOther, sendto, sendtoTFO, sendmsgTFO, sendmmsgTFO, sendmsgPlain, shmget, semop, mqOpen, connect}
	always := map[string]uint32{unixDgram.name: eacces, pairDgram.name: eacces, unixRaw.name: eacces, pairRaw.name: eacces, shmget.name: eperm, semop.name: eperm, mqOpen.name: eperm}
	with := func(m map[string]uint32) map[string]uint32 {
		for k, v := range always {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		o    seccompOptions
		want map[string]uint32 // the rest: allowed
	}{
		{"namespace engine", seccompOptions{}, nil},
		{"namespace engine, proxies", seccompOptions{denyMPTCP: true}, map[string]uint32{mptcp.name: eperm}},
		{"Landlock-only, host network", seccompOptions{netGuard: true}, with(map[string]uint32{})},
		{"Landlock-only, host network, TCP servers refused", seccompOptions{netGuard: true, denyMPTCP: true}, with(map[string]uint32{mptcp.name: eperm})},
		{"Landlock-only, proxies", seccompOptions{netGuard: true, filtered: true, denyMPTCP: true}, with(map[string]uint32{
			mptcp.name: eacces, sctp.name: eacces, udp4.name: eacces, udp6.name: eacces, icmp.name: eacces, raw.name: eacces, seq6.name: eacces,
			packet.name: eacces, vsock.name: eacces, nlOther.name: eacces,
			sendtoTFO.name: eacces, sendmsgTFO.name: eacces, sendmmsgTFO.name: eacces,
		})},
		{"Landlock-only, no proxies", seccompOptions{netGuard: true, filtered: true, denySockets: true}, with(map[string]uint32{
			tcp4.name: eacces, tcp6.name: eacces, mptcp.name: eacces, sctp.name: eacces, udp4.name: eacces, udp6.name: eacces, icmp.name: eacces,
			raw.name: eacces, seq6.name: eacces, packet.name: eacces, vsock.name: eacces, nlRoute.name: eacces, nlOther.name: eacces,
			sendtoTFO.name: eacces, sendmsgTFO.name: eacces, sendmmsgTFO.name: eacces,
		})},
	}
	for _, tt := range tests {
		vm := filterVM(t, tt.o)
		for _, c := range all {
			want, ok := tt.want[c.name]
			if !ok {
				want = allow
			}
			if got := runFilter(t, vm, c.nr, c.args); got != want {
				t.Errorf("%s: %s = %#x, want %#x", tt.name, c.name, got, want)
			}
		}
	}
}
