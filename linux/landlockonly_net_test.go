//go:build linux

package linux_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fence-sandbox/fence/sandbox"
)

// The tests of this file try, from inside the Landlock-only engine, the
// ways out that a network namespace, mount masks and a private /dev
// close in the other engine: every one is also tried outside fence, as
// the same user, and works there, so that a failure inside is fence's.

var (
	sockprobeOnce sync.Once
	sockprobeErr  error
)

// sockprobe builds testdata/sockprobe once and copies it into w.ws.
func (w *world) sockprobe(t *testing.T) {
	t.Helper()
	p := filepath.Join(bin, "sockprobe")
	sockprobeOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", p, "./testdata/sockprobe")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			sockprobeErr = fmt.Errorf("build sockprobe: %v\n%s", err, out)
		}
	})
	if sockprobeErr != nil {
		t.Fatal(sockprobeErr)
	}
	b, err := os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(w.ws+"/sockprobe", b, 0o755))
	must(t, os.Lchown(w.ws+"/sockprobe", w.uid, w.uid))
}

// counting listens on network, addr and counts the connections.
func counting(t *testing.T, network, addr string) (net.Listener, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen(network, addr)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return l, &n
}

// probeResults reads sockprobe's lines into a map.
func probeResults(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			got[k] = v
		}
	}
	return got
}

func checkProbe(t *testing.T, what string, r result, want map[string]string) {
	t.Helper()
	got := probeResults(r.stdout)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s: %q, want %q", what, k, got[k], v)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

// hostDir is a directory in the host's /tmp that u can use, standing in
// for a tmux server's.
func hostDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/tmp", "fence-host-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	return dir
}

// TestLandlockOnlyConnect: without a network namespace or mount masks,
// fence judges each connect(). From inside, as root and as uid 65534,
// the command tries a loopback port that is not a proxy's, the proxy's
// port on 127.0.0.2 and ::1, TCP Fast Open, UDP, a host unix socket in
// /tmp (a listening socket standing in for tmux) by its path, by a
// symlink and by a relative path, a unix datagram socket (as /dev/log)
// by socket and socketpair, and an abstract socket of the host: each
// fails with EACCES, fence names the destination and the rule, and no
// listener sees a connection or a datagram. The proxy (blocking and
// nonblocking) and a socket network.allowUnixSockets lists connect.
// The warning says exactly this.
func TestLandlockOnlyConnect(t *testing.T) {
	const eacces = "permission denied"
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			other, otherConns := counting(t, "tcp", "127.0.0.1:0")
			udp, err := net.ListenPacket("udp", "127.0.0.1:0")
			must(t, err)
			defer udp.Close()
			dir := hostDir(t)
			host, listed, gram := dir+"/host.sock", dir+"/listed.sock", dir+"/log.sock"
			_, hostConns := counting(t, "unix", host)
			_, listedConns := counting(t, "unix", listed)
			g, err := net.ListenPacket("unixgram", gram)
			must(t, err)
			defer g.Close()
			abstract := fmt.Sprintf("@fence-test-%d-%d", os.Getpid(), u.uid)
			_, abstractConns := counting(t, "unix", abstract)
			for _, p := range []string{host, listed, gram} {
				must(t, os.Chmod(p, 0o777))
			}
			w := landlockWorld(t, u, fmt.Sprintf(`{"network": {"allowedDomains": ["example.com"], "allowUnixSockets": [%q]}, "filesystem": {"allowWrite": ["."]}}`, listed))
			w.sockprobe(t)
			must(t, os.Symlink(host, w.ws+"/link.sock"))
			otherAddr, udpAddr := other.Addr().String(), udp.LocalAddr().String()

			outside := []string{"tcp", otherAddr, "tfo", otherAddr, "udp", udpAddr, "unix", host, "unix", "link.sock", "unixgram", gram, "pairgram", gram, "unix", abstract}
			r := w.runIn(t, w.ws, nil, append([]string{"./sockprobe"}, outside...)...)
			want := map[string]string{}
			for i := 0; i < len(outside); i += 2 {
				want[outside[i]+" "+outside[i+1]] = "ok"
			}
			checkProbe(t, "outside fence", r, want)
			time.Sleep(100 * time.Millisecond) // the listeners count what came
			baseOther, baseHost, baseAbstract := otherConns.Load(), hostConns.Load(), abstractConns.Load()
			for range 2 { // the datagrams sent from outside
				udp.SetReadDeadline(time.Now().Add(time.Second))
				udp.ReadFrom(make([]byte, 16))
			}
			for range 2 {
				g.SetReadDeadline(time.Now().Add(time.Second))
				g.ReadFrom(make([]byte, 16))
			}

			ops := []string{
				"tcp", "127.0.0.1:proxy", "nonblock", "127.0.0.1:proxy",
				"tcp", "127.0.0.2:proxy", "tcp", "[::1]:proxy", "tcp", otherAddr, "tfo", otherAddr, "udp", udpAddr,
				"unix", host, "unix", "link.sock", "unix", listed, "unixgram", gram, "pairgram", gram, "unix", abstract,
				"serve", "@" + abstract[1:] + "-own", "unix", abstract + "-own", "listen4", "-", "listen6", "-",
				"cd", dir, "unix", "host.sock",
			}
			r = w.landlockOnly(t, u, append([]string{"--", "./sockprobe"}, ops...)...)
			checkProbe(t, "inside", r, map[string]string{
				"tcp 127.0.0.1:proxy":       "ok",
				"nonblock 127.0.0.1:proxy":  "ok",
				"tcp 127.0.0.2:proxy":       eacces,
				"tcp [::1]:proxy":           eacces,
				"tcp " + otherAddr:          eacces,
				"tfo " + otherAddr:          eacces,
				"udp " + udpAddr:            "socket: " + eacces,
				"unix " + host:              eacces,
				"unix link.sock":            eacces,
				"unix " + listed:            "ok",
				"unixgram " + gram:          "socket: " + eacces,
				"pairgram " + gram:          "socketpair: " + eacces,
				"unix " + abstract:          eacces,
				"unix " + abstract + "-own": eacces, // the sandbox may not listen on a host abstract name
				"listen4 -":                 eacces,
				"listen6 -":                 eacces,
				"cd " + dir:                 "ok",
				"unix host.sock":            eacces,
			})
			port := strings.TrimPrefix(probeEnvPort(r.stderr), ":")
			proxyRule := "only fence's proxies on 127.0.0.1, and the ports of network.allowLocalOutboundPorts on 127.0.0.1 and ::1, are reachable (network.allowedDomains decides names)"
			hostRule := fmt.Sprintf("the host's unix socket %q, which network.allowUnixSockets does not list", host)
			for _, line := range []string{
				"fence: refused connect to 127.0.0.2:" + port + ": " + proxyRule,
				"fence: refused connect to [::1]:" + port + ": " + proxyRule,
				"fence: refused connect to " + otherAddr + ": " + proxyRule,
				fmt.Sprintf("fence: refused connect to %q: %s", host, hostRule),
				fmt.Sprintf("fence: refused connect to %q: %s", "link.sock", hostRule),
				fmt.Sprintf("fence: refused connect to %q: %s", "host.sock", hostRule),
				fmt.Sprintf("fence: refused connect to %s: the abstract unix socket, which no process of the sandbox listens on", abstract),
				"fence: refused listen on TCP: without a network namespace, a socket would listen on the host's addresses, which the network policy does not allow",
				"fence: refused listen on an abstract unix socket: without a network namespace, the abstract names are the host's: a host client dialling the name (X11's @/tmp/.X11-unix/X0, say) would reach the sandbox",
			} {
				if port == "" || !strings.Contains(r.stderr, line+"\n") {
					t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
				}
			}
			time.Sleep(100 * time.Millisecond)
			if n := otherConns.Load() - baseOther; n != 0 {
				t.Errorf("the loopback port that is no proxy's got %d connections from the sandbox", n)
			}
			if n := hostConns.Load() - baseHost; n != 0 {
				t.Errorf("the host's unix socket got %d connections from the sandbox", n)
			}
			if n := abstractConns.Load() - baseAbstract; n > 1 {
				t.Errorf("the host's abstract socket got %d connections from the sandbox, want at most fence's, shut down", n)
			}
			if listedConns.Load() != 1 {
				t.Errorf("the listed socket got %d connections, want 1", listedConns.Load())
			}
			for _, pc := range []net.PacketConn{udp, g} {
				pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				if n, _, err := pc.ReadFrom(make([]byte, 16)); err == nil {
					t.Errorf("a datagram from the sandbox reached %s (%d bytes)", pc.LocalAddr(), n)
				}
			}
			checkWeaker(t, r.stderr, u)

			// A socket bound after the start is reached only if a process
			// of the sandbox listens on it: the sandbox's own connects, one
			// the host binds meanwhile is cut off before the command can
			// send on it.
			late, work := dir+"/late.sock", w.ws+"/work"
			must(t, os.Mkdir(work, 0o755))
			must(t, os.Chown(work, w.uid, w.uid))
			lateData := make(chan int, 1)
			go func() {
				for range 200 {
					if _, err := os.Stat(work + "/ready"); err == nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				l, err := net.Listen("unix", late)
				if err != nil {
					lateData <- -1
					return
				}
				defer l.Close()
				os.Chmod(late, 0o777)
				c, err := l.Accept()
				if err != nil {
					lateData <- -1
					return
				}
				n, _ := c.Read(make([]byte, 16)) // EOF: fence shut it down
				c.Close()
				lateData <- n
			}()
			r = w.landlockOnly(t, u, "--", "./sockprobe", "serve", "work/own.sock", "unix", "work/own.sock", "selfpath", "work/own.sock", "selfpath", host,
				"touch", "work/ready", "waitfor", late, "unix", late)
			checkProbe(t, "bound after the start", r, map[string]string{"serve work/own.sock": "ok", "unix work/own.sock": "ok", "unix " + late: eacces,
				"selfpath work/own.sock": "ok", "selfpath " + host: eacces})
			if line := fmt.Sprintf("fence: refused connect to %q: the unix socket %q, which no process of the sandbox listens on and network.allowUnixSockets does not list\n", late, late); !strings.Contains(r.stderr, line) {
				t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
			}
			// Refused before any connection: the host's server sees none.
			select {
			case n := <-lateData:
				t.Errorf("the host's late socket saw a connection (read %d bytes, -1 for an error)", n)
			case <-time.After(300 * time.Millisecond):
			}

			// fence reads the address from the caller's memory: a
			// non-dumpable process's only with root's CAP_SYS_PTRACE.
			// A signal handled while fence connects (a Go program's
			// preemption signal) may not restart a connect fence has made
			// (EISCONN).
			r = w.landlockOnly(t, u, "--", "./sockprobe", "loopsig", "127.0.0.1:proxy:500")
			if !strings.HasPrefix(r.stdout, "loop: ") {
				t.Errorf("500 connects to the proxy, signalled: %q, want all connected\n%s", r.stdout, r.stderr)
			}
			r = w.landlockOnly(t, u, "--", "./sockprobe", "tcp", "[::ffff:127.0.0.1]:proxy", "undumpable", "-", "tcp", "127.0.0.1:proxy")
			want = map[string]string{"tcp [::ffff:127.0.0.1]:proxy": "ok", "undumpable -": "ok", "tcp 127.0.0.1:proxy": "ok"}
			if u.uid != 0 {
				want["tcp 127.0.0.1:proxy"] = eacces
				if line := "fence: refused connect to an address fence could not read: process_vm_readv: operation not permitted\n"; !strings.Contains(r.stderr, line) {
					t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
				}
			}
			checkProbe(t, "non-dumpable", r, want)
		})
	}
}

// probeEnvPort finds the proxy's port in fence's refusal of 127.0.0.2.
func probeEnvPort(stderr string) string {
	_, rest, ok := strings.Cut(stderr, "refused connect to 127.0.0.2:")
	if !ok {
		return ""
	}
	port, _, _ := strings.Cut(rest, ":")
	if _, err := strconv.Atoi(port); err != nil {
		return ""
	}
	return port
}

// checkWeaker asserts that the warning lists what WeakerFor says of a
// plan with a filtered network and the minimal /dev.
func checkWeaker(t *testing.T, stderr string, u user) {
	t.Helper()
	plan := &sandbox.Plan{Network: "none", Mounts: sandbox.Mounts{Devices: "minimal"}}
	for _, line := range sandbox.WeakerFor(plan, u.uid == 0) {
		if !strings.Contains(stderr, "fence: warning:   "+line+"\n") {
			t.Errorf("the warning does not list %q:\n%s", line, stderr)
		}
	}
}

// TestLandlockOnlyDevices: /dev/pts and /dev/shm are the host's in the
// Landlock-only engine. The test opens a pseudo-terminal of its own (the
// user's other session, owned by the user) and gives fence another as
// its stdin: the command may open its own terminal and not the other,
// cannot make a new one, cannot create files in /dev/shm and cannot use
// System V shared memory, all of which work outside fence.
func TestLandlockOnlyDevices(t *testing.T) {
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			w := landlockWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			w.sockprobe(t)
			otherM, other, err := pty.Open()
			if err != nil {
				t.Skipf("cannot open a pseudo-terminal: %v", err)
			}
			defer otherM.Close()
			defer other.Close()
			ownM, own, err := pty.Open()
			must(t, err)
			defer ownM.Close()
			defer own.Close()
			for _, tty := range []string{other.Name(), own.Name()} {
				must(t, os.Chown(tty, w.uid, w.uid))
			}
			shm := fmt.Sprintf("/dev/shm/fence-test-%d-%d", os.Getpid(), u.uid)
			defer os.Remove(shm)
			outside := []string{"open", other.Name(), "openpty", "-", "create", shm, "shmget", "-"}
			r := w.runIn(t, w.ws, nil, append([]string{"./sockprobe"}, outside...)...)
			checkProbe(t, "outside fence", r, map[string]string{"open " + other.Name(): "ok", "openpty -": "ok", "create " + shm: "ok", "shmget -": "ok"})
			must(t, os.Remove(shm))

			r = w.landlockOnlyWith(t, u, own, "--degraded=warn", "--", "./sockprobe", "open", own.Name(), "open", "/dev/null",
				"open", other.Name(), "openpty", "-", "create", shm, "shmget", "-")
			checkProbe(t, "inside", r, map[string]string{
				"open " + own.Name():   "ok",
				"open /dev/null":       "ok",
				"open " + other.Name(): "permission denied",
				"openpty -":            "open /dev/ptmx: permission denied",
				"create " + shm:        "permission denied",
				"shmget -":             "operation not permitted",
			})
			if _, err := os.Stat(shm); err == nil {
				t.Errorf("the command created %s", shm)
			}
			checkWeaker(t, r.stderr, u)
		})
	}
}

// BenchmarkLandlockOnlyConnect reports what one connect() costs when the
// Landlock-only engine's supervisor judges and makes it: sockprobe
// connects to fence's proxy 1,000 times per run (socket, connect, close)
// and reports the mean, next to the same loop outside fence against a
// listener of the benchmark's.
func BenchmarkLandlockOnlyConnect(b *testing.B) {
	if _, err := exec.LookPath("unshare"); err != nil {
		b.Skip("unshare not found")
	}
	dir, err := os.MkdirTemp("/var/tmp", "fence-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	probe := filepath.Join(bin, "sockprobe")
	if out, err := exec.Command("go", "build", "-o", probe, "./testdata/sockprobe").CombinedOutput(); err != nil {
		b.Fatalf("build sockprobe: %v\n%s", err, out)
	}
	settings := filepath.Join(dir, "policy.jsonc")
	if err := os.WriteFile(settings, []byte(`{"network": {"allowedDomains": ["example.com"]}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	mean := func(out []byte) float64 {
		_, rest, ok := strings.Cut(string(out), "loop: ")
		ns, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), " ns"))
		if !ok || err != nil {
			b.Fatalf("sockprobe: %s", out)
		}
		return float64(ns)
	}
	var direct, judged float64
	runs := 0
	for b.Loop() {
		out, err := exec.Command(probe, "loop", l.Addr().String()+":1000").CombinedOutput()
		if err != nil {
			b.Fatalf("sockprobe: %v\n%s", err, out)
		}
		direct += mean(out)
		cmd := exec.Command("unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh",
			filepath.Join(bin, "fence"), "-s", settings, "--degraded=warn", "--", probe, "loop", "127.0.0.1:proxy:1000")
		cmd.Dir = dir
		if out, err = cmd.Output(); err != nil {
			b.Fatalf("fence: %v\n%s", err, out)
		}
		judged += mean(out)
		runs++
	}
	b.ReportMetric(judged/float64(runs)/1000, "judged-µs/connect")
	b.ReportMetric(direct/float64(runs)/1000, "direct-µs/connect")
}

// TestLandlockOnlyLocalPortsOnLoopback: a port of allowLocalOutboundPorts is
// reached on 127.0.0.1 and ::1, the host's loopback, and on no other
// address, as root and as uid 65534.
func TestLandlockOnlyLocalPortsOnLoopback(t *testing.T) {
	for _, u := range landlockOnlyUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			v4, conns := counting(t, "tcp", "127.0.0.1:0")
			port := v4.Addr().(*net.TCPAddr).Port
			want := map[string]string{fmt.Sprintf("tcp 127.0.0.1:%d", port): "ok", fmt.Sprintf("tcp 127.0.0.2:%d", port): "permission denied"}
			ops := []string{"tcp", fmt.Sprintf("127.0.0.1:%d", port), "tcp", fmt.Sprintf("127.0.0.2:%d", port)}
			if v6, err := net.Listen("tcp", fmt.Sprintf("[::1]:%d", port)); err == nil {
				defer v6.Close()
				ops = append(ops, "tcp", fmt.Sprintf("[::1]:%d", port))
				want[fmt.Sprintf("tcp [::1]:%d", port)] = "ok"
			}
			w := landlockWorld(t, u, fmt.Sprintf(`{"network": {"allowedDomains": ["example.com"], "allowLocalOutbound": true, "allowLocalOutboundPorts": [%d]}}`, port))
			w.sockprobe(t)
			r := w.landlockOnly(t, u, append([]string{"--", "./sockprobe"}, ops...)...)
			checkProbe(t, "inside", r, want)
			if line := fmt.Sprintf("fence: refused connect to 127.0.0.2:%d: only fence's proxies", port); !strings.Contains(r.stderr, line) {
				t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
			}
			time.Sleep(100 * time.Millisecond)
			if conns.Load() != 1 {
				t.Errorf("the local port got %d connections on 127.0.0.1, want 1", conns.Load())
			}
		})
	}
}
