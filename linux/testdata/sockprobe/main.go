// Command sockprobe tries, from inside a sandbox, the ways out the
// Landlock-only engine judges. Its arguments are a list of operations,
// each an op and one argument; it prints one line per attempt, "OP ARG:
// ok" or "OP ARG: <error>". An address's port "proxy" is the port of
// $HTTP_PROXY.
//
//	tcp ADDR          connect a TCP socket
//	nonblock ADDR     connect a nonblocking TCP socket, then wait for it
//	tfo ADDR          sendto with MSG_FASTOPEN on a new TCP socket
//	listen4|listen6 - listen on a new TCP socket, unbound (on a port of the kernel's choosing)
//	udp ADDR          a UDP socket, then sendto
//	unix PATH         connect a unix stream socket ("@NAME" is abstract)
//	unixgram PATH     a unix datagram socket, then sendto
//	pairgram PATH     a unix datagram socket pair, then sendto from one end
//	open PATH         open for reading and writing, no controlling terminal
//	create PATH       create a file
//	openpty -         a new pseudo-terminal: /dev/ptmx, then TIOCGPTPEER
//	shmget -          a System V shared memory segment
//	cd DIR            change directory
//	undumpable -      make this process non-dumpable, as ssh does
//	serve PATH        listen on a unix socket, accepting in the background
//	selfpath PATH     open PATH O_PATH, then connect to /proc/self/fd/N
//	touch PATH        create an empty file
//	waitfor PATH      wait (up to 10 s) until PATH exists
//	loop ADDR:N       connect N times and print the mean time of one
//	loopsig ADDR:N    loop, while another thread signals the connecting one
package main

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	args := os.Args[1:]
	if len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: sockprobe OP ARG...")
		os.Exit(2)
	}
	for i := 0; i < len(args); i += 2 {
		op, arg := args[i], args[i+1]
		if op == "loop" || op == "loopsig" {
			loop(arg, op == "loopsig")
			continue
		}
		err := run(op, arg)
		res := "ok"
		if err != nil {
			res = err.Error()
		}
		fmt.Printf("%s %s: %s\n", op, arg, res)
	}
}

func run(op, arg string) error {
	switch op {
	case "tcp", "nonblock", "tfo", "udp":
		sa, family, err := inet(arg)
		if err != nil {
			return err
		}
		typ := unix.SOCK_STREAM
		if op == "udp" {
			typ = unix.SOCK_DGRAM
		}
		if op == "nonblock" {
			typ |= unix.SOCK_NONBLOCK
		}
		fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		switch op {
		case "tcp":
			return unix.Connect(fd, sa)
		case "nonblock":
			return nonblocking(fd, sa)
		case "tfo":
			return unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sa)
		}
		return unix.Sendto(fd, []byte("x"), 0, sa)
	case "listen4", "listen6":
		family := unix.AF_INET
		if op == "listen6" {
			family = unix.AF_INET6
		}
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		return unix.Listen(fd, 8)
	case "unix", "unixgram":
		typ := unix.SOCK_STREAM
		if op == "unixgram" {
			typ = unix.SOCK_DGRAM
		}
		fd, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		name := arg
		if strings.HasPrefix(name, "@") {
			name = "\x00" + name[1:]
		}
		if op == "unixgram" {
			return unix.Sendto(fd, []byte("x"), 0, &unix.SockaddrUnix{Name: name})
		}
		return unix.Connect(fd, &unix.SockaddrUnix{Name: name})
	case "pairgram":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socketpair: %w", err)
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		return unix.Sendto(fds[0], []byte("x"), 0, &unix.SockaddrUnix{Name: arg})
	case "open":
		fd, err := unix.Open(arg, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "create":
		fd, err := unix.Open(arg, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "openpty":
		m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open /dev/ptmx: %w", err)
		}
		defer unix.Close(m)
		if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
			return fmt.Errorf("TIOCSPTLCK: %w", err)
		}
		s, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY))
		if e != 0 {
			return fmt.Errorf("TIOCGPTPEER: %w", e)
		}
		unix.Close(int(s))
		return nil
	case "shmget":
		id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		if err == nil {
			unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		}
		return err
	case "cd":
		return os.Chdir(arg)
	case "serve":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: arg}); err != nil {
			return fmt.Errorf("bind: %w", err)
		}
		if err := unix.Listen(fd, 8); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		go func() {
			for {
				c, _, err := unix.Accept(fd)
				if err != nil {
					return
				}
				unix.Close(c)
			}
		}()
		return nil
	case "selfpath":
		f, err := unix.Open(arg, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open: %w", err)
		}
		defer unix.Close(f)
		return run("unix", fmt.Sprintf("/proc/self/fd/%d", f))
	case "touch":
		return os.WriteFile(arg, nil, 0o644)
	case "waitfor":
		for range 200 {
			if _, err := os.Lstat(arg); err == nil {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
		return fmt.Errorf("%s did not appear", arg)
	case "undumpable":
		return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	return fmt.Errorf("unknown op %q", op)
}

// inet parses ADDR, whose port may be "proxy".
func inet(s string) (unix.Sockaddr, int, error) {
	if p, ok := strings.CutSuffix(s, ":proxy"); ok {
		u := os.Getenv("HTTP_PROXY")
		s = p + u[strings.LastIndex(u, ":"):]
		s = strings.TrimSuffix(s, "/")
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return nil, 0, err
	}
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, unix.AF_INET, nil
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}, unix.AF_INET6, nil
}

// nonblocking connects a nonblocking socket: EINPROGRESS, then the
// result once it is writable.
func nonblocking(fd int, sa unix.Sockaddr) error {
	err := unix.Connect(fd, sa)
	if err != unix.EINPROGRESS {
		return fmt.Errorf("not EINPROGRESS: %v", err)
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	if _, err := unix.Poll(pfd, 5000); err != nil {
		return err
	}
	if e, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || e != 0 {
		return fmt.Errorf("SO_ERROR %d: %v", e, err)
	}
	return nil
}

// loop connects to ADDR N times (ADDR:N) and prints "loop: N ns" with
// the mean time of one socket, connect and close. With signal, another
// thread sends the connecting one SIGURG (which Go's runtime handles,
// restarting the call) every 20 µs meanwhile.
func loop(arg string, signal bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if signal {
		pid, tid := unix.Getpid(), unix.Gettid()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				unix.Tgkill(pid, tid, unix.SIGURG)
				time.Sleep(20 * time.Microsecond)
			}
		}()
	}
	i := strings.LastIndex(arg, ":")
	n, _ := strconv.Atoi(arg[i+1:])
	sa, family, err := inet(arg[:i])
	if err != nil || n <= 0 {
		fmt.Printf("loop %s: %v\n", arg, err)
		return
	}
	start := time.Now()
	for range n {
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, sa)
			unix.Close(fd)
		}
		if err != nil {
			fmt.Printf("loop %s: %v\n", arg, err)
			return
		}
	}
	fmt.Printf("loop: %d ns\n", time.Since(start).Nanoseconds()/int64(n))
}
