//go:build linux

package linux_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The tests of this file are the escape suite's classes of what a run
// leaves behind: each attacks from inside, then asserts on what the host
// or the next run finds.

// TestLeftBehindRenamedParent: renaming a parent of a masked or read-only
// path would carry the mount away and leave the name free for a file of
// the command's own. Every directory on the way is pinned, so the rename
// fails, the secret stays where the next run's rule finds it, and the
// next run still cannot read it.
func TestLeftBehindRenamedParent(t *testing.T) {
	const pol = `{"filesystem": {"allowWrite": ["."], "denyRead": ["secrets/inner.txt"]}}`
	attacks := []struct{ name, script string }{
		{"rename the parent of a masked file", `mv secrets s2`},
		{"remove the parent after emptying it", `rm -rf secrets`},
		{"rename .git, hooks and all", `mv .git g2`},
		{"rename the parent's parent", `mkdir -p deep/er && mv deep d2`},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := newWorld(t, u.uid, pol)
				must(t, os.MkdirAll(w.ws+"/deep/er", 0o755))
				must(t, os.WriteFile(w.ws+"/deep/er/key", []byte("DEEP-SECRET\n"), 0o644))
				must(t, os.Lchown(w.ws+"/deep", u.uid, u.uid))
				must(t, os.Lchown(w.ws+"/deep/er", u.uid, u.uid))
				must(t, os.Lchown(w.ws+"/deep/er/key", u.uid, u.uid))
				must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["."], "denyRead": ["secrets/inner.txt", "deep/er/key"]}}`), 0o644))
				r := w.fence(t, "", nil, "-c", a.script+`; mkdir -p secrets .git/hooks deep/er; echo planted > secrets/inner.txt; echo planted > deep/er/key; echo '#!/bin/sh' > .git/hooks/post-checkout`)
				if !strings.Contains(r.stderr, "Device or resource busy") {
					t.Errorf("the attack was not refused by a pinned mount point:\n%s", r.stderr)
				}
				for name, want := range map[string]string{"secrets/inner.txt": "INNER-SECRET\n", "deep/er/key": "DEEP-SECRET\n", ".git/hooks/pre-commit": "#!/bin/sh\n"} {
					if b, err := os.ReadFile(filepath.Join(w.ws, name)); err != nil || string(b) != want {
						t.Errorf("host %s = %q, %v; want it where it was, unchanged", name, b, err)
					}
				}
				if _, err := os.Stat(w.ws + "/.git/hooks/post-checkout"); err == nil {
					t.Errorf("a hook was planted")
				}
				next := w.fence(t, "", nil, "-c", `cat secrets/inner.txt deep/er/key`)
				check(t, next, 1, "", `secrets/inner.txt: Permission denied`)
				if strings.Contains(next.stdout, "SECRET") {
					t.Errorf("the next run read the secret:\n%s", next.stdout)
				}
			})
		}
	}
}

// TestLeftBehindRenamedParentLandlockOnly: without namespaces the parent
// of a denied path gets no Landlock rule of its own (its other entries
// are granted one by one), so it can be neither renamed nor removed.
func TestLeftBehindRenamedParentLandlockOnly(t *testing.T) {
	w := newWorld(t, os.Getuid(), `{"filesystem": {"allowWrite": ["."], "denyRead": ["secrets/inner.txt"], "denyWrite": [".git"]}}`)
	r := w.withoutUserNS(t, "-c", `mv secrets s2; mv .git g2; rmdir secrets; echo x > secrets/other`)
	check(t, r, 1, "", `(?s)enforcing the policy with Landlock alone.*'secrets'.*Permission denied.*'.git'.*Permission denied.*secrets.*Permission denied`)
	if b, err := os.ReadFile(w.ws + "/secrets/inner.txt"); err != nil || string(b) != "INNER-SECRET\n" {
		t.Errorf("host secrets/inner.txt = %q, %v; want it where it was", b, err)
	}
	if _, err := os.Stat(w.ws + "/.git/config"); err != nil {
		t.Errorf(".git moved: %v", err)
	}
}

// gitEnv gives git an identity without a config file.
var gitEnv = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}

// gitWorld replaces the world's stand-in .git with a real repository
// holding one commit, a submodule whose git directory is absorbed into
// .git/modules, a nested repository, a local remote and a linked
// worktree next to the workspace, all owned by the world's user.
func gitWorld(t *testing.T, u user, policy string) *world {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	w := newWorld(t, u.uid, policy)
	must(t, os.RemoveAll(w.ws+"/.git"))
	must(t, os.Chmod(w.base, 0o777)) // for ../feature and ../remote.git
	script := `set -e
git init -q -b main .
git add README && git commit -q -m one
mkdir -p .git/modules && git init -q -b main --separate-git-dir="$PWD/.git/modules/lib" lib
git -C lib commit -q --allow-empty -m lib
git init -q -b main vendor/nested
git init -q --bare ../remote.git && git push -q ../remote.git main
git worktree add -q ../feature -b feature
`
	if out, err := w.userCmd(w.ws, "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("make the repository: %v\n%s", err, out)
	}
	return w
}

// userCmd is argv run as the world's user in dir, outside any sandbox,
// git given an identity.
func (w *world) userCmd(dir string, argv ...string) *exec.Cmd {
	return w.commandIn(context.Background(), dir, gitEnv, argv...)
}

// hostGit runs git on the host in dir, as the world's user would after
// the sandbox, and reports whether a planted command left its marker.
func hostGit(t *testing.T, w *world, dir, marker string, args ...string) bool {
	t.Helper()
	if out, err := w.userCmd(dir, append([]string{"git"}, args...)...).CombinedOutput(); err != nil && strings.Contains(string(out), "dubious ownership") {
		t.Fatalf("git on the host refused the repository: %s", out)
	}
	_, err := os.Stat(marker)
	return err == nil
}

// TestLeftBehindGitControlFiles: every file git takes configuration or
// code from stays out of the command's reach, in the repository, its
// submodule, a nested repository and a linked worktree; one the command
// creates where none was is moved aside before the host's git can read
// it. Afterwards the host's own git runs none of what was planted.
func TestLeftBehindGitControlFiles(t *testing.T) {
	attacks := []struct{ name, script, stderr string }{
		{"point commondir at a repository of the command's", `git init -q --bare evil && git config --file evil/config core.fsmonitor "touch $MARK" && echo "$PWD/evil" > .git/commondir && echo planted`, ""},
		{"git config", `git config core.fsmonitor "touch $MARK"`, `could not write config file .git/config`},
		{"append to .git/config", `printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >> .git/config`, `Read-only file system`},
		{"a hook", `printf '#!/bin/sh\ntouch %s\n' "$MARK" > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`, `Read-only file system`},
		{"info/attributes", `echo '* filter=x' > .git/info/attributes && echo planted`, ""},
		{"info/exclude", `echo 'planted-file' >> .git/info/exclude`, `Read-only file system`},
		{"config.worktree", `printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" > .git/config.worktree && echo planted`, ""},
		{"the submodule's gitfile", `echo "gitdir: $PWD/evil" > lib/.git`, `Read-only file system|Device or resource busy`},
		{"the submodule's config", `printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >> .git/modules/lib/config`, `Read-only file system`},
		{"the nested repository's hooks", `echo x > vendor/nested/.git/hooks/pre-commit`, `Read-only file system`},
		{"the linked worktree's commondir", `echo "$PWD/evil" > .git/worktrees/feature/commondir`, `Read-only file system`},
		{"alternates", `mkdir -p .git/objects/info && echo /tmp > .git/objects/info/alternates && echo planted`, ""},
		{"commondir, then .git made read-only", `git init -q --bare evil && git config --file evil/config core.fsmonitor "touch $MARK" && echo "$PWD/evil" > .git/commondir && chmod 555 .git && echo planted`, ""},
		{"commondir, with the quarantine names taken", `git init -q --bare evil && git config --file evil/config core.fsmonitor "touch $MARK" && now=$(date +%s) && for i in $(seq 0 30); do : > .git/commondir.fence-quarantine-$((now+i)); done && echo "$PWD/evil" > .git/commondir && echo planted`, ""},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
				marker := w.outside + "/MARK"
				must(t, os.Chmod(w.outside, 0o777))
				r := w.fence(t, "", append([]string{"MARK=" + marker}, gitEnv...), "-c", a.script)
				if a.stderr != "" && !regexp.MustCompile(a.stderr).MatchString(r.stderr) {
					t.Errorf("stderr does not match %q:\n%s", a.stderr, r.stderr)
				}
				if a.stderr == "" && !strings.Contains(r.stderr, "fence moved it to") {
					t.Errorf("a created control file was not moved aside:\n%s%s", r.stdout, r.stderr)
				}
				for _, dir := range []string{w.ws, w.ws + "/lib", w.base + "/feature"} {
					if hostGit(t, w, dir, marker, "status") || hostGit(t, w, dir, marker, "checkout", "-q", "-b", "after-"+filepath.Base(dir)) {
						t.Fatalf("the host's git in %s ran what the command planted", dir)
					}
				}
			})
		}
	}
}

// TestGitWorkUnderFence: everyday git works with the control files
// protected, in the main work tree and in a linked worktree, and a write
// git refuses names fence's rule.
func TestGitWorkUnderFence(t *testing.T) {
	work := `set -e
echo change >> README && git add README && git commit -q -m two
git branch topic && git checkout -q topic && echo t > t.txt && git add t.txt && git commit -q -m topic
git switch -q main && git merge -q --no-edit topic
echo s >> README && git stash -q && git stash pop -q && git checkout -q README
git tag v1 && git fetch -q ../remote.git main
git checkout -q -b rb topic && echo r > r.txt && git add r.txt && git commit -q -m r && git rebase -q main
git status --short && echo done`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			r := w.fence(t, "", gitEnv, "-c", work)
			check(t, r, 0, `done\n$`, "")
			if strings.Contains(r.stderr, "fence moved it") {
				t.Errorf("everyday git created a protected file:\n%s", r.stderr)
			}
			r = w.fence(t, "", gitEnv, "-c", `git remote add origin https://example.invalid/x.git`)
			check(t, r, 128, "", `(?s)could not .*config.*fence: hint: .*mandatory.gitConfig.*filesystem.allowGitConfig`)
		})
	}
}

// TestGitWorkInLinkedWorktree runs fence in a linked worktree: commits
// work there, and the main repository's hooks and config stay protected.
func TestGitWorkInLinkedWorktree(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := gitWorld(t, u, `{"filesystem": {"allowWrite": [".", "../ws/.git"]}}`)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := w.command(ctx, gitEnv, "-c", `echo f > f.txt && git add f.txt && git commit -q -m f && echo committed; echo x >> ../ws/.git/config; echo x > ../ws/.git/hooks/pre-commit; echo x > ../ws/.git/worktrees/feature/commondir`)
			cmd.Dir = w.base + "/feature"
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the protected files were writable:\n%s", out)
			}
			want := `(?s)committed.*config: Read-only file system.*pre-commit: Read-only file system.*commondir: Read-only file system`
			if !regexp.MustCompile(want).Match(out) {
				t.Errorf("output does not match %q:\n%s", want, out)
			}
		})
	}
}

// TestLeftBehindPlantedSymlink: a link the command plants where a rule
// points (a path that does not exist yet) or on the way to the next
// run's working directory leads out of the tree it lies in; the next run
// grants nothing through it, says so, and `fence check` agrees.
func TestLeftBehindPlantedSymlink(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "cache"], "defaultDenyRead": true, "allowRead": ["data"]}}`)
			r := w.fence(t, "", nil, "-c", `ln -s ../outside cache && ln -s ../outside data && ln -s ../outside proj && echo planted`)
			check(t, r, 0, `planted`, "")
			r = w.fence(t, "", nil, "-c", `echo x > cache/pwned; cat data/data.txt`)
			check(t, r, 1, "", `(?s)filesystem.allowWrite "cache": .*/ws/cache, a symlink in .*/ws .* grants nothing.*filesystem.allowRead "data".*cache/pwned: Read-only file system.*data.txt: Permission denied`)
			if strings.Contains(r.stdout, "OUTSIDE") {
				t.Errorf("the next run read through the planted link:\n%s", r.stdout)
			}
			if _, err := os.Stat(w.outside + "/pwned"); err == nil {
				t.Errorf("the next run wrote through the planted link")
			}
			c := w.fence(t, "", nil, "check", "write", "cache/x")
			check(t, c, 1, `denied write`, `grants nothing`)

			r = w.inPlantedDir(t)
			check(t, r, 125, "", `the working directory: .*/ws/proj leads through .*/ws/proj, a symlink`)
			if _, err := os.Stat(w.outside + "/pwned"); err == nil {
				t.Errorf("the run in the planted working directory wrote outside")
			}
		})
	}
}

// TestLeftBehindQuarantineThroughLink: the command plants a link where a
// protected path's parent was missing, so that the after-run check would
// reach a host file through it; fence moves the link aside and leaves
// the host's file where it is.
func TestLeftBehindQuarantineThroughLink(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			must(t, os.MkdirAll(w.outside+"/mise", 0o755))
			must(t, os.WriteFile(w.outside+"/mise/config.toml", []byte("HOST\n"), 0o644))
			r := w.fence(t, "", nil, "-c", `ln -s ../outside .config`)
			check(t, r, 0, "", `fence moved the link, `+w.ws+`/\.config, to `+w.ws+`/\.config\.fence-quarantine-`)
			if b, err := os.ReadFile(w.outside + "/mise/config.toml"); err != nil || string(b) != "HOST\n" {
				t.Errorf("the host's file = %q, %v; want it untouched", b, err)
			}
			if _, err := os.Lstat(w.ws + "/.config"); err == nil {
				t.Errorf("the planted link is still there")
			}
		})
	}
}

// TestLeftBehindUnreadableDirectory: a directory the command made
// unreadable (chmod 000) hides what a deny rule or the repository search
// would find in it from a later fence of the same user; the next run
// covers it whole, so the command cannot open it again and read or
// change what is inside.
func TestLeftBehindUnreadableDirectory(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."], "denyRead": ["**/.env", "secrets/inner.txt"]}}`)
			must(t, os.WriteFile(w.ws+"/sub/.env", []byte("ENV-SECRET\n"), 0o644))
			must(t, os.Lchown(w.ws+"/sub/.env", u.uid, u.uid))
			if out, err := w.userCmd(w.ws, "git", "init", "-q", "a/nested").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			must(t, os.MkdirAll(w.ws+"/x/in", 0o755))
			must(t, os.WriteFile(w.ws+"/x/.env", []byte("X-SECRET\n"), 0o644))
			for _, p := range []string{"/x", "/x/in", "/x/.env"} {
				must(t, os.Lchown(w.ws+p, u.uid, u.uid))
			}
			r := w.fence(t, "", nil, "-c", `chmod 000 sub secrets a && chmod 444 x`)
			check(t, r, 0, "", "")
			t.Cleanup(func() {
				for _, d := range []string{"sub", "secrets", "a", "x"} {
					os.Chmod(filepath.Join(w.ws, d), 0o755)
				}
			})
			r = w.fence(t, "", nil, "-c", `chmod 755 sub secrets a x; cat sub/.env secrets/inner.txt x/.env; echo '[core] fsmonitor = x' >> a/nested/.git/config`)
			if r.code != 1 || strings.Contains(r.stdout, "SECRET") {
				t.Errorf("exit %d: want the next run to start (not refuse) and fail to open the directories again:\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if b, _ := os.ReadFile(w.ws + "/a/nested/.git/config"); strings.Contains(string(b), "fsmonitor") {
				t.Errorf("the nested repository's config was changed")
			}
		})
	}
}

// TestLeftBehindNewRepository: outside any repository, a .git the command
// creates in the working directory would be the repository the host's
// git finds there first, with whatever config, commondir and hooks the
// command gave it. It is moved aside whole.
func TestLeftBehindNewRepository(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			must(t, os.RemoveAll(w.ws+"/.git"))
			marker := w.outside + "/MARK"
			must(t, os.Chmod(w.outside, 0o777))
			r := w.fence(t, "", append([]string{"MARK=" + marker}, gitEnv...), "-c",
				`git init -q --bare c && git config --file c/config core.fsmonitor "touch $MARK" && git init -q . && echo "$PWD/c" > .git/commondir && echo planted`)
			check(t, r, 0, "planted", `the command created `+w.ws+`/\.git \(always protected: a \.git created here .*\); fence moved it to`)
			if _, err := os.Lstat(w.ws + "/.git"); err == nil {
				t.Errorf("the new .git is still where git looks")
			}
			if hostGit(t, w, w.ws, marker, "status") {
				t.Errorf("the host's git ran what the command planted")
			}
		})
	}
}

// TestLeftBehindLinkFromEarlierRun: a link planted by a run with another
// policy (in a directory above the next run's working directory, or in a
// cache a template makes writable) is no more trusted than one in the
// next run's own writable tree.
func TestLeftBehindLinkFromEarlierRun(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			must(t, os.RemoveAll(w.ws+"/.git")) // not a repository: only "." was writable
			r := w.fence(t, "", nil, "-c", `ln -s ../outside proj`)
			check(t, r, 0, "", "")
			r = w.inPlantedDir(t)
			check(t, r, 125, "", `the working directory: .*/ws/proj leads through .*/ws/proj, a symlink`)

			must(t, os.MkdirAll(w.home+"/.cache", 0o755))
			must(t, os.Lchown(w.home+"/.cache", u.uid, u.uid))
			must(t, os.Symlink("../../outside", w.home+"/.cache/tool"))
			must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["~/.cache/tool"]}}`), 0o644))
			r = w.fence(t, "", nil, "-c", `echo x > ~/.cache/tool/pwned`)
			check(t, r, 1, "", `(?s)filesystem.allowWrite "~/.cache/tool": .* grants nothing.*Read-only file system`)
			if _, err := os.Stat(w.outside + "/pwned"); err == nil {
				t.Errorf("a run wrote through a link planted in a cache")
			}
		})
	}
}

// TestLeftBehindGitConfigNamesTheTree: configuration that points git at
// files in the writable tree (husky's core.hooksPath, an include.path, the
// user's include of a dotfiles repository, a filter's script) makes those
// files part of what git runs; they stay read-only, and one that does not
// exist yet is moved aside if the command creates it.
func TestLeftBehindGitConfigNamesTheTree(t *testing.T) {
	attacks := []struct{ name, script string }{
		{"husky's hooks", `printf '#!/bin/sh\ntouch %s\n' "$MARK" > .husky/pre-commit`},
		{"a hooks path that does not exist yet", `mkdir -p .githooks && printf '#!/bin/sh\ntouch %s\n' "$MARK" > .githooks/post-checkout && chmod +x .githooks/post-checkout`},
		{"a file the repository config includes", `printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >> shared.gitconfig`},
		{"a file the user's config includes", `printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >> dotfiles/gitconfig`},
		{"a filter's script", `printf '#!/bin/sh\ntouch %s\ncat\n' "$MARK" > tools/clean.sh`},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
				setup := `set -e
mkdir -p .husky dotfiles tools
printf '#!/bin/sh\nexit 0\n' > .husky/pre-commit && chmod +x .husky/pre-commit
: > shared.gitconfig && : > dotfiles/gitconfig
printf '#!/bin/sh\ncat\n' > tools/clean.sh && chmod +x tools/clean.sh
echo '* filter=clean' > .gitattributes
git config core.hooksPath .husky
git config include.path ../shared.gitconfig
git config filter.clean.clean ./tools/clean.sh
printf '[include]\n\tpath = %s\n' "$PWD/dotfiles/gitconfig" > "$HOME/.gitconfig"
`
				if a.name == "a hooks path that does not exist yet" {
					setup += "git config core.hooksPath .githooks\n"
				}
				if out, err := w.userCmd(w.ws, "sh", "-c", setup).CombinedOutput(); err != nil {
					t.Fatalf("setup: %v\n%s", err, out)
				}
				marker := w.outside + "/MARK"
				must(t, os.Chmod(w.outside, 0o777))
				w.fence(t, "", append([]string{"MARK=" + marker}, gitEnv...), "-c", a.script)
				if hostGit(t, w, w.ws, marker, "status") || hostGit(t, w, w.ws, marker, "checkout", "-q", "-b", "after") ||
					hostGit(t, w, w.ws, marker, "commit", "-q", "--allow-empty", "-m", "after") || hostGit(t, w, w.ws, marker, "add", "README") {
					t.Errorf("the host's git ran what the command planted")
				}
			})
		}
	}
}

// TestLeftBehindNewWorktree: a worktree the command adds gets its git
// directory where no mount could cover it; its commondir, pointed at a
// repository of the command's, is moved aside after the run, and the
// worktree itself keeps working.
func TestLeftBehindNewWorktree(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			marker := w.outside + "/MARK"
			must(t, os.Chmod(w.outside, 0o777))
			r := w.fence(t, "", append([]string{"MARK=" + marker}, gitEnv...), "-c",
				`git worktree add -q -b w2 wt && git init -q --bare evil && git config --file evil/config core.fsmonitor "touch $MARK" && cp -r .git/objects .git/refs .git/HEAD evil/ 2>/dev/null; echo "$PWD/evil" > .git/worktrees/wt/commondir && echo planted`)
			check(t, r, 0, "planted", `added a worktree to .*/ws/\.git whose .*/worktrees/wt/commondir git would follow out of the repository; fence moved it`)
			if hostGit(t, w, w.ws+"/wt", marker, "status") {
				t.Errorf("the host's git in the new worktree ran what the command planted")
			}
		})
	}
}

// TestLeftBehindGlobProtection: a protected glob (the user site-packages
// of any Python, whose .pth files run at every start) that matched
// nothing at start: what the command creates there is moved aside.
func TestLeftBehindGlobProtection(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
			r := w.fence(t, "", nil, "-c", `mkdir -p ~/.local/lib/python3.99/site-packages && echo 'import os' > ~/.local/lib/python3.99/site-packages/evil.pth && chmod 311 ~/.local/lib`)
			check(t, r, 0, "", `the command created .*/home/\.local/lib/python3\.99/site-packages .*fence moved it to`)
			if _, err := os.Lstat(w.home + "/.local/lib/python3.99/site-packages/evil.pth"); err == nil {
				t.Errorf("the planted .pth is still where Python reads it")
			}
		})
	}
}

// inPlantedDir runs fence in ws/proj, a link the command planted, with
// $PWD saying so, as a shell that changed into it would.
func (w *world) inPlantedDir(t *testing.T) result {
	t.Helper()
	return w.runIn(t, w.ws+"/proj", []string{"PWD=" + w.ws + "/proj"}, filepath.Join(bin, "fence"), "-s", w.settings, "-c", `echo x > pwned`)
}

// TestLeftBehindQuarantineUnsearchable: the command plants files, then
// takes its own workspace's permissions away so that fence could not
// move them aside; fence gives the owner's bits back and moves them, and
// says nothing of the paths the command did not create.
func TestLeftBehindQuarantineUnsearchable(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			t.Cleanup(func() { os.Chmod(w.ws, 0o755) })
			r := w.fence(t, "", nil, "-c", `echo 'touch x' > .envrc && mkdir .claude && chmod 0 .`)
			check(t, r, 0, "", `(?s)created .*/ws/\.claude .*fence moved it to.*created .*/ws/\.envrc .*fence moved it to`)
			if n := strings.Count(r.stderr, "fence: warning:"); n != 2 {
				t.Errorf("%d warnings, want the 2 for what the command made:\n%s", n, r.stderr)
			}
			os.Chmod(w.ws, 0o755)
			for _, p := range []string{".envrc", ".claude"} {
				if _, err := os.Lstat(filepath.Join(w.ws, p)); err == nil {
					t.Errorf("%s is still where it would be read", p)
				}
			}
		})
	}
}

// TestLeftBehindProtectedLink: a protected file that is a symlink at
// start (~/.bashrc kept in a dotfiles repository) has its target covered
// by a mount, but the link is an entry of a writable directory; one the
// command replaces or removes is put back after the run.
func TestLeftBehindProtectedLink(t *testing.T) {
	attacks := []struct{ name, script, stderr string }{
		{"replaced by a file", `rm ~/.bashrc && echo 'touch x' > ~/.bashrc`, `replaced .*/home/\.bashrc, a symlink to dotfiles/bashrc .*moved what it left to .*restored the link`},
		{"pointed elsewhere", `ln -sfn evil ~/.bashrc`, `replaced .*/home/\.bashrc, a symlink to dotfiles/bashrc .*restored the link`},
		{"removed", `rm ~/.bashrc`, `removed .*/home/\.bashrc, a symlink to dotfiles/bashrc .*restored it`},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
				must(t, os.MkdirAll(w.home+"/dotfiles", 0o755))
				must(t, os.WriteFile(w.home+"/dotfiles/bashrc", []byte("# mine\n"), 0o644))
				must(t, os.Remove(w.home+"/.bashrc"))
				must(t, os.Symlink("dotfiles/bashrc", w.home+"/.bashrc"))
				for _, p := range []string{"/dotfiles", "/dotfiles/bashrc", "/.bashrc"} {
					must(t, os.Lchown(w.home+p, u.uid, u.uid))
				}
				r := w.fence(t, "", nil, "-c", a.script)
				check(t, r, 0, "", a.stderr)
				if target, err := os.Readlink(w.home + "/.bashrc"); err != nil || target != "dotfiles/bashrc" {
					t.Errorf("~/.bashrc -> %q, %v; want the link back", target, err)
				}
				if b, _ := os.ReadFile(w.home + "/dotfiles/bashrc"); string(b) != "# mine\n" {
					t.Errorf("the link's target changed: %q", b)
				}
			})
		}
	}
}

// TestLeftBehindLinkFromWiderRun: a run with the home writable replaces
// ~/.cache with a link; a later run whose policy names ~/.cache (the code
// template's does) but not the home gets nothing through it, because
// fence remembers that a sandbox could write the home. The same for a
// working directory reached through a link planted in the home.
func TestLeftBehindLinkFromWiderRun(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["~"]}}`)
			r := w.fence(t, "", nil, "-c", `mkdir -p ~/.cache && rm -rf ~/.cache && ln -s ../outside ~/.cache && ln -s ../outside ~/proj && echo planted`)
			check(t, r, 0, "planted", "")
			must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["~/.cache", "."]}}`), 0o644))
			r = w.fence(t, "", nil, "-c", `echo x > ~/.cache/pwned`)
			check(t, r, 1, "", `(?s)filesystem.allowWrite "~/.cache": .*/home/\.cache, a symlink in .*/home .* grants nothing.*Read-only file system`)
			r = w.runIn(t, w.home+"/proj", []string{"PWD=" + w.home + "/proj"}, filepath.Join(bin, "fence"), "-s", w.settings, "-c", `echo x > pwned`)
			check(t, r, 125, "", `the working directory: .*/home/proj leads through`)
			if _, err := os.Stat(w.outside + "/pwned"); err == nil {
				t.Errorf("a later run wrote through a link a wider run planted")
			}

			// A link that stays in the home still widens a run that may
			// write only ~/.cache and the workspace.
			must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["~"]}}`), 0o644))
			check(t, w.fence(t, "", nil, "-c", `rm ~/.cache && ln -s . ~/.cache`), 0, "", "")
			must(t, os.WriteFile(w.settings, []byte(`{"filesystem": {"allowWrite": ["~/.cache", "."]}}`), 0o644))
			r = w.fence(t, "", nil, "-c", `echo x >> ~/.cache/.bash_history`)
			check(t, r, 1, "", `(?s)filesystem.allowWrite "~/.cache": .* outside every tree this run may write.*Read-only file system`)
		})
	}
}

// TestLeftBehindGitlink: the command creates a repository below the work
// tree and records it in the index as a submodule; the host's git status
// in the work tree would run that repository's config. Its .git is moved
// aside after the run; a submodule that existed at start is left alone.
func TestLeftBehindGitlink(t *testing.T) {
	const mk = `mkdir newsub && cd newsub && git init -q && git -c core.fsmonitor=false commit -q --allow-empty -m x && git config core.fsmonitor "touch $MARK; false" && cd .. && `
	const add = `git -c core.fsmonitor=false update-index --add --cacheinfo 160000,$(git -C newsub -c core.fsmonitor=false rev-parse HEAD),newsub`
	attacks := []struct{ name, script string }{
		{"recorded in the index", mk + add},
		{"recorded in a split index", mk + add + ` && git -c core.fsmonitor=false update-index --split-index`},
		{"with the index's times set back", `cp -p .git/index .git/index.orig && ` + mk + add + ` && touch -r .git/index.orig .git/index && rm .git/index.orig`},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
				marker := w.outside + "/MARK"
				must(t, os.Chmod(w.outside, 0o777))
				r := w.fence(t, "", append([]string{"MARK=" + marker}, gitEnv...), "-c", a.script+` && echo planted`)
				check(t, r, 0, "planted", `made .*/ws/newsub a repository of its own and recorded it in the index of .*/ws, .*fence moved its \.git to`)
				if hostGit(t, w, w.ws, marker, "status") {
					t.Errorf("the host's git status ran the planted repository's config")
				}
				if _, err := os.Lstat(w.ws + "/lib/.git"); err != nil {
					t.Errorf("the submodule that existed at start was moved: %v", err)
				}
			})
		}
	}
}

// TestLeftBehindNewModule: a submodule git directory the command creates
// in .git/modules, with hooks of its own, is what the host's next
// `git submodule update` checks out and runs; it is moved aside.
func TestLeftBehindNewModule(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			r := w.fence(t, "", gitEnv, "-c", `git clone -q --bare ../remote.git .git/modules/evil && mkdir -p .git/modules/evil/hooks && printf '#!/bin/sh\ntouch x\n' > .git/modules/evil/hooks/post-checkout && echo planted`)
			check(t, r, 0, "planted", `created .*/ws/\.git/modules/evil, a submodule's git directory .*fence moved it to`)
			if _, err := os.Lstat(w.ws + "/.git/modules/evil"); err == nil {
				t.Errorf("the planted module is still where git submodule update looks")
			}
			if _, err := os.Lstat(w.ws + "/.git/modules/lib"); err != nil {
				t.Errorf("the module that existed at start was moved: %v", err)
			}
		})
	}
}

// TestLeftBehindLinksOnTheWay: links on the way to protected paths (a
// directory link ~/.config, a link to a link through ~/dots) are put
// back after the run, and the directory of a protected link is pinned.
func TestLeftBehindLinksOnTheWay(t *testing.T) {
	attacks := []struct{ name, script, stderr, link, target string }{
		{"a linked ~/.config replaced by a directory", `rm ~/.config && mkdir -p ~/.config/git && printf '[core]\n\tfsmonitor = x\n' > ~/.config/git/config`,
			`replaced .*/home/\.config, a symlink to dotcfg .*restored the link`, "/.config", "dotcfg"},
		{"a linked directory on the way to a linked ~/.bashrc", `rm ~/dots && mkdir ~/dots && echo 'touch x' > ~/dots/bashrc`,
			`replaced .*/home/dots, a symlink to src/dots .*restored the link`, "/dots", "src/dots"},
		{"the directory of a protected link moved away", `mv ~/.ssh ~/.ssh.old`, `Device or resource busy`, "/.ssh/config", "../dotcfg/ssh_config"},
	}
	for _, u := range users(t) {
		for _, a := range attacks {
			t.Run(u.name+"/"+a.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
				h := w.home
				for _, d := range []string{"/dotcfg/git", "/src/dots", "/.ssh"} {
					must(t, os.MkdirAll(h+d, 0o755))
				}
				must(t, os.WriteFile(h+"/dotcfg/git/config", []byte("[user]\n"), 0o644))
				must(t, os.WriteFile(h+"/dotcfg/ssh_config", []byte("Host x\n"), 0o644))
				must(t, os.WriteFile(h+"/src/dots/bashrc", []byte("# mine\n"), 0o644))
				must(t, os.Remove(h+"/.bashrc"))
				must(t, os.Symlink("dotcfg", h+"/.config"))
				must(t, os.Symlink("src/dots", h+"/dots"))
				must(t, os.Symlink("dots/bashrc", h+"/.bashrc"))
				must(t, os.Symlink("../dotcfg/ssh_config", h+"/.ssh/config"))
				must(t, filepath.Walk(h, func(p string, _ os.FileInfo, err error) error { must(t, err); return os.Lchown(p, u.uid, u.uid) }))
				// The user config directory is spelled without the link,
				// or fence refuses the run before it starts (see
				// TestConfigDirThroughWritableLink): this test is of what a
				// run that does start leaves.
				r := w.fence(t, "", []string{"XDG_CONFIG_HOME=" + h + "/dotcfg"}, "-c", a.script)
				if !regexp.MustCompile(a.stderr).MatchString(r.stderr) {
					t.Errorf("stderr does not match %q:\n%s", a.stderr, r.stderr)
				}
				if target, err := os.Readlink(h + a.link); err != nil || target != a.target {
					t.Errorf("%s -> %q, %v; want the link to %s back", a.link, target, err, a.target)
				}
				for name, want := range map[string]string{"/dotcfg/git/config": "[user]\n", "/src/dots/bashrc": "# mine\n", "/dotcfg/ssh_config": "Host x\n"} {
					if b, _ := os.ReadFile(h + name); string(b) != want {
						t.Errorf("%s = %q, want it unchanged", name, b)
					}
				}
			})
		}
	}
}

// TestLeftBehindDanglingAndDotDotLinks: a protected link whose target does
// not exist yet has its target watched (the command's file there is moved
// aside, the user's link stays), and a link whose target climbs out with
// ".." is followed as the kernel follows it.
func TestLeftBehindDanglingAndDotDotLinks(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
			h := w.home
			must(t, os.MkdirAll(h+"/dots/x", 0o755))
			must(t, os.WriteFile(h+"/dots/profile", []byte("# mine\n"), 0o644))
			must(t, os.Remove(h+"/.bashrc"))
			must(t, os.Symlink("dots/bashrc", h+"/.bashrc"))
			must(t, os.Symlink("dots/x/../profile", h+"/.profile"))
			must(t, filepath.Walk(h, func(p string, _ os.FileInfo, err error) error { must(t, err); return os.Lchown(p, u.uid, u.uid) }))
			r := w.fence(t, "", nil, "-c", `echo 'touch x' > ~/dots/bashrc; mkdir -p ~/evil/sub && echo 'touch y' > ~/evil/profile && rmdir ~/dots/x && ln -s ../evil/sub ~/dots/x; true`)
			check(t, r, 0, "", `(?s)created .*/home/dots/bashrc .*fence moved it to.*replaced .*/home/dots/x, a symlink|created .*/home/dots/bashrc .*fence moved it to`)
			if target, err := os.Readlink(h + "/.bashrc"); err != nil || target != "dots/bashrc" {
				t.Errorf("~/.bashrc -> %q, %v; want the user's link left alone", target, err)
			}
			if _, err := os.Lstat(h + "/dots/bashrc"); err == nil {
				t.Errorf("the command's file is where the user's link leads")
			}
			if b, err := os.ReadFile(h + "/.profile"); err != nil || string(b) != "# mine\n" {
				t.Errorf("~/.profile reads %q, %v; want the user's own", b, err)
			}
		})
	}
}

// TestLeftBehindUninitializedSubmodule: a submodule that is not checked
// out leaves an empty directory and a gitlink in the index; a repository
// the command creates in that directory is entered by the host's next git
// status, so its .git is moved aside.
func TestLeftBehindUninitializedSubmodule(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := gitWorld(t, u, `{"filesystem": {"allowWrite": ["."]}}`)
			setup := `set -e
git -c protocol.file.allow=always submodule add -q -b main ../remote.git subm && git commit -qm sub
git submodule deinit -q -f subm && rm -rf .git/modules/subm
`
			if out, err := w.userCmd(w.ws, "sh", "-c", setup).CombinedOutput(); err != nil {
				t.Fatalf("setup: %v\n%s", err, out)
			}
			marker := w.outside + "/MARK"
			must(t, os.Chmod(w.outside, 0o777))
			r := w.fence(t, "", append([]string{"MARK=" + marker}, gitEnv...), "-c", `cd subm && git init -q && git config core.fsmonitor "touch $MARK; false" && echo planted`)
			check(t, r, 0, "planted", `created .*/ws/subm/\.git .*fence moved it to`)
			if hostGit(t, w, w.ws, marker, "status") {
				t.Errorf("the host's git status ran the planted repository's config")
			}
		})
	}
}
