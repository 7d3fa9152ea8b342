//go:build linux

package linux_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmpLink makes a symlink at a fresh name directly in /tmp, to target,
// owned by uid, and removes it after the test.
func tmpLink(t *testing.T, target string, uid int) string {
	t.Helper()
	link := fmt.Sprintf("/tmp/fence-link-%d-%d", os.Getpid(), time.Now().UnixNano())
	must(t, os.Symlink(target, link))
	t.Cleanup(func() { os.Remove(link) })
	must(t, os.Lchown(link, uid, uid))
	return link
}

// outsideTmp is a file outside /tmp holding content, owned by uid.
func outsideTmp(t *testing.T, uid int, content string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "fence-outside-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	f := filepath.Join(dir, "file")
	must(t, os.WriteFile(f, []byte(content), 0o644))
	must(t, os.Chown(dir, uid, uid))
	must(t, os.Chown(f, uid, uid))
	return f
}

// otherUser is a uid that is not u's: root's links are another user's
// to uid 65534, and 65534's to root.
func otherUser(u user) int {
	if u.uid == 0 {
		return 65534
	}
	return 0
}

// TestTmpHomeDotfileLinks runs with a home below /tmp whose dotfiles are
// symlinks, into the home and out of /tmp: with reads open the home is
// bound read-only into the private /tmp, with allowRead (reads open or
// not) the rule's path is, and either way the links work as on the
// host, while a write there is refused by the read-only bind that -d
// names.
func TestTmpHomeDotfileLinks(t *testing.T) {
	tests := []struct {
		name, policy, bind, rule string
	}{
		{"reads open", `{}`, `read-only \S+/home \(the home \(reads are open`, `home`},
		{"allowRead, reads open", `{"filesystem": {"allowRead": ["~/dotfiles", "~"]}}`, `read-only \S+/home \(filesystem.allowRead "~"\)`, `filesystem.allowRead "~" \(settings file: \S+\)`},
		{"allowRead, defaultDenyRead", `{"filesystem": {"defaultDenyRead": true, "allowRead": ["~", "OUTSIDE"]}}`, `read-only \S+/home \(filesystem.allowRead "~"\)`, `filesystem.allowRead "~" \(settings file: \S+\)`},
	}
	for _, u := range users(t) {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				out := outsideTmp(t, u.uid, "PROFILE-OUTSIDE\n")
				w := newWorldIn(t, "/tmp", u.uid, strings.ReplaceAll(tt.policy, "OUTSIDE", out))
				must(t, os.MkdirAll(w.home+"/dotfiles", 0o755))
				must(t, os.WriteFile(w.home+"/dotfiles/gitconfig", []byte("[user]\n\tname = Dotfile\n"), 0o644))
				must(t, os.Symlink(w.home+"/dotfiles/gitconfig", w.home+"/.gitconfig"))
				must(t, os.Symlink(out, w.home+"/.profile"))
				chownTree(t, w.home, u.uid)
				r := w.fence(t, "", nil, "-d", "-c", `cat ~/.gitconfig ~/.profile && git config --global user.name; echo x > ~/new || echo refused`)
				check(t, r, 0, `^\[user\]\n\tname = Dotfile\nPROFILE-OUTSIDE\nDotfile\nrefused\n$`, `(?s)new: Read-only file system.*`)
				check(t, r, 0, "", `fence: debug: mounts: `+tt.bind)
				if _, err := os.Stat(w.home + "/new"); err == nil {
					t.Error("the write landed in the host's home")
				}
				// fence check names the rule that binds it read-only.
				r = w.runIn(t, w.ws, nil, filepath.Join(bin, "fence"), "-s", w.settings, "check", "write", w.home+"/new")
				check(t, r, 1, `^denied write \S+/home/new: `+tt.rule+`; the sandbox binds it read-only from the host into its own /tmp`, "")
			})
		}
	}
}

// chownTree gives every file below dir to uid, links included.
func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	must(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	}))
}

// TestTmpHomeThroughLink runs with HOME a link in /tmp to the real home,
// also below /tmp: the link is the caller's, so the home's rules follow
// it, the private /tmp has the link and the home both, and a write to a
// writable directory of the home reaches the host's.
func TestTmpHomeThroughLink(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorldIn(t, "/tmp", u.uid, `{"filesystem": {"allowWrite": ["~/.cache"]}}`)
			must(t, os.Mkdir(w.home+"/.cache", 0o755))
			must(t, os.Lchown(w.home+"/.cache", u.uid, u.uid))
			link := tmpLink(t, w.home, u.uid)
			r := w.fence(t, "", []string{"HOME=" + link}, "-d", "-c", `cat ~/.bashrc && echo y > ~/.cache/y && cd ~ && pwd -P && readlink `+link)
			check(t, r, 0, `^# rc\n`+w.home+`\n`+w.home+`\n$`, `mounts: link `+link+` -> `+w.home+` made again in the private /tmp \(.*the home\), followed as yours`)
			if b, err := os.ReadFile(w.home + "/.cache/y"); err != nil || string(b) != "y\n" {
				t.Errorf("the write to ~/.cache did not reach the host: %q, %v", b, err)
			}
		})
	}
}

// TestTmpWorkingDirThroughLink runs in a working directory entered
// through a link in /tmp, with allowWrite naming it as "." and as the
// link's spelling: it is writable at both spellings, and the writes
// reach the host's directory.
func TestTmpWorkingDirThroughLink(t *testing.T) {
	for _, u := range users(t) {
		for _, rule := range []string{".", "LINK"} {
			t.Run(u.name+"/"+rule, func(t *testing.T) {
				w := newWorldIn(t, "/tmp", u.uid, "")
				link := tmpLink(t, w.base, u.uid)
				must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["`+strings.ReplaceAll(rule, "LINK", link+"/ws")+`"]}}`), 0o644))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := w.commandIn(ctx, link+"/ws", []string{"PWD=" + link + "/ws"}, filepath.Join(bin, "fence"), "-s", w.settings, "-c", `pwd && echo x > new && echo y > $PWD/new2 && cat `+link+`/ws/new new2`)
				r := runResult(t, cmd)
				check(t, r, 0, `^`+link+`/ws\nx\ny\n$`, "")
				for _, f := range []string{"new", "new2"} {
					if _, err := os.Stat(filepath.Join(w.ws, f)); err != nil {
						t.Errorf("%s did not reach the host's working directory: %v", f, err)
					}
				}
			})
		}
	}
}

// TestTmpLinksNotFollowed plants links in /tmp that lead to a secret:
// one of another user's, as HOME, and one a sandbox with /tmp writable
// left behind, as an allowRead path under defaultDenyRead. Neither is
// followed: the secret stays unreadable, and fence says why.
func TestTmpLinksNotFollowed(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name+"/another user's link as HOME", func(t *testing.T) {
			if len(users(t)) < 2 {
				t.Skip("needs root to make a link of another user's")
			}
			w := newWorldIn(t, "/tmp", u.uid, `{}`)
			link := tmpLink(t, w.home, otherUser(u))
			r := w.fence(t, "", []string{"HOME=" + link}, "-c", `cat ~/.ssh/id_rsa; cat `+w.home+`/.ssh/id_rsa`)
			check(t, r, 1, "", `(?s)belongs to uid \d+, not to you.*id_rsa: No such file or directory`)
			if strings.Contains(r.stdout, "SECRET-KEY") {
				t.Errorf("the secret was read through another user's link:\n%s", r.stdout)
			}
		})
		t.Run(u.name+"/a link a sandbox planted", func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["/tmp"]}}`)
			link := fmt.Sprintf("/tmp/fence-planted-%d", time.Now().UnixNano())
			t.Cleanup(func() { os.Remove(link) })
			r := w.fence(t, "", nil, "-c", "ln -s "+w.outside+" "+link)
			check(t, r, 0, "", "")
			if _, err := os.Lstat(link); err != nil {
				t.Fatalf("the sandbox could not plant its link: %v", err)
			}
			must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"defaultDenyRead": true, "allowRead": ["`+link+`"], "allowWrite": ["`+link+`"]}}`), 0o644))
			r = w.fence(t, "", nil, "-c", "cat "+link+"/data.txt; cat "+w.outside+"/data.txt; echo x > "+link+"/new")
			check(t, r, 1, "", `(?s)a symlink in /tmp \(a tree a sandbox could write\).*grants nothing there`)
			if strings.Contains(r.stdout, "OUTSIDE") {
				t.Errorf("the secret was read through the planted link:\n%s", r.stdout)
			}
			if _, err := os.Stat(w.outside + "/new"); err == nil {
				t.Error("a write went through the planted link")
			}
			// The caller entering it as the working directory (mkdir -p
			// /tmp/build && cd /tmp/build) gets no write there either: a
			// link of the caller's is followed only inside /tmp.
			must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["."]}}`), 0o644))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r = runResult(t, w.commandIn(ctx, link, []string{"PWD=" + link}, filepath.Join(bin, "fence"), "-s", w.settings, "-c", "echo x > new"))
			check(t, r, 125, "", `the working directory: .*followed only where it lies in a temporary directory outside every tree a sandbox could write`)
			if _, err := os.Stat(w.outside + "/new"); err == nil {
				t.Error("a write went through the planted link entered as the working directory")
			}
		})
	}
}

// TestFenceBinaryBelowTmp runs a copy of fence from a directory below
// /tmp: GIT_SSH_COMMAND names it, so it must be there inside the private
// /tmp, and git over ssh reaches a server on the host's loopback through
// it (the server hears ssh's banner).
func TestFenceBinaryBelowTmp(t *testing.T) {
	if _, err := os.Stat("/usr/bin/ssh"); err != nil {
		t.Skip("ssh not found")
	}
	dir, err := os.MkdirTemp("/tmp", "fence-copy-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	self, err := os.ReadFile(filepath.Join(bin, "fence"))
	must(t, err)
	copied := filepath.Join(dir, "fence")
	must(t, os.WriteFile(copied, self, 0o755))
	banners := make(chan string, 4)
	l := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		c.SetDeadline(time.Now().Add(30 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		banners <- line
	})
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"network": {"allowedDomains": ["127.0.0.1"]}}`)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			script := `echo "$GIT_SSH_COMMAND"; test -x ` + copied + ` && echo visible; git ls-remote ssh://git@127.0.0.1:` + port + `/repo`
			r := runResult(t, w.commandIn(ctx, w.ws, nil, copied, "-s", w.settings, "-c", script))
			check(t, r, 128, `^ssh -o ProxyCommand='`+copied+` ssh-proxy %h %p'\nvisible\n$`, "")
			select {
			case b := <-banners:
				if !strings.HasPrefix(b, "SSH-2.0-") {
					t.Errorf("the server heard %q, not ssh's banner", b)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("git over ssh never reached the server:\n%s", r.stderr)
			}
		})
	}
}

// TestTmpDenyAboveBind denies a directory below /tmp that holds a path an
// allow rule names: deny beats allow, so the private /tmp shows neither.
func TestTmpDenyAboveBind(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorldIn(t, "/tmp", u.uid, `{"filesystem": {"allowRead": ["~/.ssh"], "denyRead": ["~"]}}`)
			r := w.fence(t, "", nil, "-c", `cat ~/.ssh/id_rsa`)
			check(t, r, 1, "", `id_rsa: (Permission denied|No such file or directory)`)
			if strings.Contains(r.stdout, "SECRET-KEY") {
				t.Errorf("a path below a denied directory was readable:\n%s", r.stdout)
			}
		})
	}
}
