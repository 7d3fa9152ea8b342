//go:build linux

package linux_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The nested tests run fence inside fence, as an agent under fence whose
// commands are wrapped again: the outer run's policy is the world's, the
// inner one's is inner.jsonc in the workspace, and the inner fence is a
// copy of the built binary beside the workspace (the outer sandbox's
// /tmp, where the build is, is its own).

// nestedLine is what a nested run says it could not narrow.
const nestedLine = `fence: warning: inside a fence sandbox, whose policy still holds: this run narrows it with Landlock and seccomp, and could not narrow`

// nested runs the inner fence with the inner policy and args inside the
// outer fence of w, with outerArgs before the "--". The workspace gets
// an empty directory "out" for the inner policy to grant.
func (w *world) nested(t *testing.T, inner string, outerArgs []string, args ...string) result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bin, "fence"))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(w.base, "bin"), 0o755))
	for name, content := range map[string][]byte{"bin/fence": b, "ws/inner.jsonc": []byte(inner)} {
		p := filepath.Join(w.base, name)
		must(t, os.WriteFile(p, content, 0o755))
		must(t, os.Lchown(p, w.uid, w.uid))
	}
	if err := os.Mkdir(filepath.Join(w.ws, "out"), 0o755); err == nil {
		must(t, os.Lchown(filepath.Join(w.ws, "out"), w.uid, w.uid))
	}
	argv := append(append(outerArgs, "--", w.innerFence(), "-s", "inner.jsonc"), args...)
	return w.fence(t, "", nil, argv...)
}

// innerFence is the inner fence's path: a directory of its own, since
// fence protects the one it runs from.
func (w *world) innerFence() string { return filepath.Join(w.base, "bin", "fence") }

// TestNestedFiles: the inner run works without --degraded=warn, says in
// one line what it could not narrow, narrows the outer policy's files,
// and cannot widen them.
func TestNestedFiles(t *testing.T) {
	tests := []struct {
		name, outer, inner, script, stdout, stderr string
		code                                       int
	}{
		{"the inner command runs", `{}`, `{}`,
			`echo inner; grep -c . /proc/self/status >/dev/null && grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status`,
			"^inner\nNoNewPrivs:\t1\nSeccomp:\t2\n$", "", 0},
		{"an inner denyRead narrows the outer's reads", `{}`, `{"filesystem": {"denyRead": ["secret.txt"]}}`,
			`cat README; cat secret.txt`,
			"^readme\n$", `secret.txt: Permission denied`, 1},
		{"an outer denyRead stays denied though the inner allows it", `{"filesystem": {"denyRead": ["secret.txt"]}}`, `{"filesystem": {"allowRead": ["."]}}`,
			`cat README; cat secret.txt`,
			"^readme\n$", `secret.txt: `, 1},
		{"the inner narrows writes", `{"filesystem": {"allowWrite": ["."]}}`, `{"filesystem": {"allowWrite": ["out"]}}`,
			`echo x > out/new && echo wrote-out; echo x > new`,
			"^wrote-out\n$", `new: Permission denied`, 2},
		{"the inner cannot widen writes", `{}`, `{"filesystem": {"allowWrite": ["."]}}`,
			`echo x > new`,
			"^$", `new: Read-only file system`, 2},
		{"the inner cannot read a directory the outer masks", `{"filesystem": {"denyRead": ["~/.ssh"]}}`, `{"filesystem": {"allowRead": ["~/.ssh"]}}`,
			`cat ~/.ssh/id_rsa`,
			"^$", `id_rsa: `, 1},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, tt.outer)
				r := w.nested(t, tt.inner, nil, "--", "sh", "-c", tt.script)
				check(t, r, tt.code, tt.stdout, tt.stderr)
				if !strings.Contains(r.stderr, nestedLine) || strings.Count(r.stderr, "fence: warning: ") > 2 {
					t.Errorf("the nested run does not say in a line what it could not narrow:\n%s", r.stderr)
				}
				if strings.Contains(r.stdout+r.stderr, "SECRET") {
					t.Errorf("a denied file was read:\n%s%s", r.stdout, r.stderr)
				}
				if strings.Contains(r.stderr, "record the trees") || strings.Contains(r.stderr, "not creating") {
					t.Errorf("the nested run warns about the outer sandbox's read-only config or home:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestNestedNetwork: the inner proxies reach out through the outer one
// by name, so a host goes through only when both policies allow it; where
// the outer sandbox refuses to listen, the command uses the outer proxies
// and the inner run says its domain rules do not narrow them. The target
// is a server on the host's loopback, allowed by its literal.
func TestNestedNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	target := "http://" + srv.Listener.Addr().String() + "/"
	notNarrowed := `this run could not narrow the network's domains: the outer sandbox refuses to listen`
	outerResolves := `this run could not narrow the addresses allowed names resolve to: the outer sandbox's proxy resolves them`
	tests := []struct {
		name, binding, outer, inner, want, stderr string
	}{
		{"both allow", "true", `["127.0.0.1"]`, `["127.0.0.1"]`, `^200  \| hello\n$`, outerResolves},
		{"the outer allows, the inner does not", "true", `["127.0.0.1"]`, `["example.com"]`, `^403 not in network\.allowedDomains \| fence: blocked HTTP 127\.0\.0\.1:`, outerResolves},
		{"the inner allows, the outer does not", "true", `["example.com"]`, `["127.0.0.1"]`, `^403 refused by the outer fence sandbox's proxy: not in network\.allowedDomains`, outerResolves},
		{"outer refuses to listen: both allow", "false", `["127.0.0.1"]`, `["127.0.0.1"]`, `^200  \| hello\n$`, notNarrowed},
		{"outer refuses to listen: the outer's rules decide", "false", `["127.0.0.1"]`, `["example.com"]`, `^200  \| hello\n$`, notNarrowed},
		{"outer refuses to listen: the outer still refuses", "false", `["example.com"]`, `["127.0.0.1"]`, `^403 not in network\.allowedDomains`, notNarrowed},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				w := newWorld(t, u.uid, fmt.Sprintf(`{"network": {"allowedDomains": %s, "allowLocalBinding": %s}}`, tt.outer, tt.binding))
				r := w.nested(t, fmt.Sprintf(`{"network": {"allowedDomains": %s}}`, tt.inner), nil, "--", "./netprobe", "http", target)
				check(t, r, 0, tt.want, tt.stderr)
				if strings.Contains(tt.want, "refused by the outer") && !strings.Contains(r.stderr, "allow it there (its network.allowedDomains) as well as here") {
					t.Errorf("the refusal summary does not say how to allow a host the outer sandbox refuses:\n%s", r.stderr)
				}
				if tt.binding == "true" && strings.Contains(r.stderr, "could not narrow the network") {
					t.Errorf("the inner run says it could not narrow the network, though it could listen:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestNestedRelayOfOuterProxy: an inner policy that relays the port of
// the outer sandbox's proxy (allowLocalOutboundPorts) would let the
// command reach out through it past the inner domain rules; the inner
// run refuses to start, naming the port.
func TestNestedRelayOfOuterProxy(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["example.com"]}}`)
			r := w.nested(t, `{"network": {"allowedDomains": ["example.org"], "httpProxyPort": 3200, "allowLocalOutbound": true, "allowLocalOutboundPorts": [3128]}}`, nil, "--", "sh", "-c", "echo ran")
			check(t, r, 125, "^$", `network.allowLocalOutboundPorts holds 3128, the port of the outer fence sandbox's proxy`)
		})
	}
}

// TestNestedDirect: the inner command reaches neither the outer proxies
// nor the host directly, whether or not the outer sandbox lets it
// listen; in the first case only its own proxies are open to it, in the
// second only the outer ones.
func TestNestedDirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	for _, u := range users(t) {
		for _, binding := range []string{"true", "false"} {
			t.Run(u.name+"/allowLocalBinding="+binding, func(t *testing.T) {
				w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["127.0.0.1"], "allowLocalBinding": `+binding+`}}`)
				w.nested(t, `{}`, nil, "--", "true") // puts the inner fence and policy in place
				// The outer proxy is where the outer fence points the
				// inner fence's environment.
				inner := `./netprobe direct ` + host + `; ./netprobe direct "${OUTER#http://}"`
				r := w.fence(t, "", nil, "--", "sh", "-c", `OUTER=$HTTP_PROXY exec `+w.innerFence()+` -s inner.jsonc -- sh -c '`+inner+`'`)
				want := "^error: dial tcp " + host + ": connect: permission denied\nerror: dial tcp 127.0.0.1:[0-9]+: connect: permission denied\n$"
				if binding == "false" {
					// the outer proxy is the command's own proxy then
					want = "^error: dial tcp " + host + ": connect: permission denied\nconnected\n$"
				}
				check(t, r, 0, want, "")
			})
		}
	}
}

// TestNestedExecArgv: inside a plain sandbox the inner run judges execs
// (argv mode). A sandbox that judges execs itself holds the only seccomp
// listener a process may have: a nested run there runs without one (the
// outer supervisor still judges every exec, by the outer rules), still
// narrows files, names the unix sockets it cannot narrow, and refuses an
// inner argv mode it could not enforce. Nor can a command take exec
// judging over with a listener of its own that lets every exec go on: for
// filters that notify on the same call, the newest decides.
func TestNestedExecArgv(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	argvPolicy := `{"command": {"deny": ["git push"], "runtimeExecPolicy": "argv"}}`
	for _, u := range users(t) {
		t.Run(u.name+"/inner argv", func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			r := w.nested(t, argvPolicy, nil, "--", "./netprobe", "exec", "git", "push", "origin")
			check(t, r, 0, `^error: operation not permitted\n$`, `(?m)^fence: blocked "git push origin": matches command.deny "git push" .*\(at exec\)$`)
		})
		t.Run(u.name+"/own listener", func(t *testing.T) {
			w := newWorld(t, u.uid, argvPolicy)
			listener := filepath.Join(w.base, "bin", "listener")
			must(t, os.MkdirAll(filepath.Dir(listener), 0o755))
			build := exec.Command("go", "build", "-o", listener, "./testdata/listener")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build listener: %v\n%s", err, out)
			}
			r := w.fence(t, "", nil, "--", listener, "git", "push", "origin")
			check(t, r, 1, `^listener: device or resource busy\n$`, "")
		})
		t.Run(u.name+"/outer argv", func(t *testing.T) {
			w := newWorld(t, u.uid, argvPolicy)
			r := w.nested(t, `{"filesystem": {"denyRead": ["secret.txt"]}}`, nil, "--", "sh", "-c", "cat README; cat secret.txt; ./netprobe exec git push origin")
			check(t, r, 0, "^readme\nerror: operation not permitted\n$",
				`(?s)secret.txt: Permission denied.*fence: blocked "git push origin": matches command.deny "git push" .*\(at exec\)`)
			if !regexpMatch(`this run could not narrow (.*; )?unix sockets: the outer sandbox's supervisor holds the only seccomp listener`, r.stderr) {
				t.Errorf("the nested run does not name the unix sockets it cannot narrow:\n%s", r.stderr)
			}
		})
		t.Run(u.name+"/outer argv, inner argv", func(t *testing.T) {
			w := newWorld(t, u.uid, argvPolicy)
			r := w.nested(t, argvPolicy, nil, "--", "sh", "-c", "echo ran")
			check(t, r, 125, "^$", `fence: error: this run is inside a fence sandbox whose supervisor judges calls through a seccomp listener .*, and a process may have only one, which this run would need to judge execs \(runtimeExecPolicy "argv"\)`)
		})
	}
}

// TestNestedHostNetwork: inside a sandbox on the host's network that
// judges listen() (allowLocalBinding false) a nested run would have no
// listener to judge connect() with, and Landlock's port rules would let
// it reach any address: it is refused. Where the outer sandbox lets
// servers listen, it judges connect() itself and runs.
func TestNestedHostNetwork(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name+"/listen judged", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["*"]}}`)
			r := w.nested(t, `{}`, nil, "--", "sh", "-c", "echo ran")
			check(t, r, 125, "^$", `fence: error: this run is inside a fence sandbox whose supervisor judges calls through a seccomp listener .*which this run would need to judge connect\(\) on the host's network the outer sandbox shares`)
		})
		t.Run(u.name+"/binding allowed", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["*"], "allowLocalBinding": true}}`)
			r := w.nested(t, `{}`, nil, "--", "sh", "-c", "echo ran")
			check(t, r, 0, "^ran\n$", nestedLine)
		})
		// The outer supervisor holds the only listener (it judges execs):
		// the inner run refuses TCP servers by Landlock's bind rule and
		// names the listen() it cannot judge.
		t.Run(u.name+"/no listener, servers refused", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["*"], "allowLocalBinding": true}, "command": {"runtimeExecPolicy": "argv"}}`)
			r := w.nested(t, `{"network": {"allowedDomains": ["*"]}}`, nil, "--", "sh", "-c", "./netprobe selfdial 127.0.0.1")
			check(t, r, 0, "^error: listen tcp 127.0.0.1:0: bind: permission denied\n$", `this run could not narrow TCP servers: Landlock refuses bind\(\), but without a seccomp listener`)
		})
	}
}

// TestNestedOuterLandlockOnly: inside a sandbox of the Landlock-only
// engine (no namespaces for the nested run to lean on, and a supervisor
// that holds the only seccomp listener) the nested run is refused with
// the reason, not run with less than it asks.
func TestNestedOuterLandlockOnly(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{}`)
	w.nested(t, `{}`, nil, "--", "true") // puts the inner fence and policy in place
	r := w.withoutUserNS(t, "--", w.innerFence(), "-s", "inner.jsonc", "--degraded=warn", "--", "sh", "-c", "echo ran")
	check(t, r, 125, "^$", `fence: error: this run is inside a fence sandbox whose supervisor judges calls through a seccomp listener .*, and a process may have only one, and the outer sandbox has no namespaces either \(the Landlock-only engine\)`)
}

// TestFakedNesting: FENCE_SANDBOX=1 (and no_new_privs) outside a fence
// sandbox, where user namespaces are refused, does not make fence run
// weaker: without --degraded=warn it refuses, with the whole list of
// what Landlock alone would not enforce.
func TestFakedNesting(t *testing.T) {
	for _, prefix := range [][]string{nil, {"setpriv", "--no-new-privs"}} {
		t.Run(fmt.Sprintf("%v", prefix), func(t *testing.T) {
			if len(prefix) > 0 {
				if _, err := exec.LookPath(prefix[0]); err != nil {
					t.Skip(prefix[0] + " not found")
				}
			}
			w := newWorld(t, os.Getuid(), `{}`)
			r := w.withoutUserNSStrict(t, []string{"FENCE_SANDBOX=1"}, prefix, "--", "sh", "-c", "echo ran")
			check(t, r, 125, "^$", `(?s)Landlock alone would enforce the policy, which is weaker:\n.*no pid namespace.*refusing to run with weaker enforcement than the policy asks; pass --degraded=warn`)
			if strings.Contains(r.stderr, "inside a fence sandbox") {
				t.Errorf("a faked nesting was taken for one:\n%s", r.stderr)
			}
		})
	}
}

// TestFakedBeacon: a process outside any fence sandbox that fakes all
// the facts it can (FENCE_SANDBOX=1, no_new_privs, a seccomp filter that
// answers the beacon and refuses user namespaces) still does not pass
// for one, since pid 1 of its pid namespace is not a fence init: fence
// refuses to run with the Landlock-only engine without --degraded=warn.
func TestFakedBeacon(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fakebeacon")
	if out, err := exec.Command("go", "build", "-o", fake, "./testdata/fakebeacon").CombinedOutput(); err != nil {
		t.Fatalf("build fakebeacon: %v\n%s", err, out)
	}
	must(t, os.Chmod(filepath.Dir(fake), 0o755))
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			r := w.run(t, nil, fake, filepath.Join(bin, "fence"), "-s", w.settings, "--", "sh", "-c", "echo ran")
			check(t, r, 125, "^$", `(?s)Landlock alone would enforce the policy, which is weaker:\n.*no pid namespace.*pass --degraded=warn`)
			if strings.Contains(r.stderr, "inside a fence sandbox") {
				t.Errorf("a faked beacon was taken for a fence sandbox:\n%s", r.stderr)
			}
		})
	}
}

// withoutUserNSStrict is withoutUserNS without --degraded=warn, with env
// added and fence run through prefix.
func (w *world) withoutUserNSStrict(t *testing.T, env, prefix []string, args ...string) result {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not found: cannot make a user namespace without nested ones")
	}
	argv := append([]string{"-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}, prefix...)
	argv = append(append(argv, filepath.Join(bin, "fence"), "-s", w.settings), args...)
	cmd := exec.Command("unshare", argv...)
	cmd.Dir, cmd.Env = w.ws, append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}
