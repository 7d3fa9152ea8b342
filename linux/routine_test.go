//go:build linux

package linux_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The tests of class 5 and 6 of what a run leaves behind: files that run
// code on a routine action, PATH directories and the fence binary stay
// read-only inside a policy that makes their trees writable.

// plant writes files below w.base, owned by w's user, with their
// directories.
func (w *world) plant(t *testing.T, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(w.base, name)
		for d := filepath.Dir(p); d != w.base; d = filepath.Dir(d) {
			defer os.Lchown(d, w.uid, w.uid)
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o755))
		must(t, os.Lchown(p, w.uid, w.uid))
	}
}

// TestRoutineFilesReadOnly attempts, from inside a policy that makes the
// home and the workspace writable, to change each kind of file that runs
// code later, and a PATH directory under the home: each attempt fails on
// the read-only bind, while the files next to them are writable.
func TestRoutineFilesReadOnly(t *testing.T) {
	const script = `
try() { sh -c "$1" 2>&1 || echo "denied: $2"; }
try 'printf "[core]\n\tfsmonitor = touch MARK\n" >> ~/.gitconfig' gitconfig-append
try 'echo "[core] fsmonitor = x" > ~/.gitconfig.new && mv ~/.gitconfig.new ~/.gitconfig' gitconfig-replace
try 'echo "{\"hooks\": {}}" > .claude/settings.json' claude-settings
try 'rm -r .claude' claude-remove
try 'echo "touch MARK" >> .envrc' envrc
try 'echo "alias ls=x" >> ~/.bash_aliases' bash-aliases
try 'echo x > ~/.ssh/authorized_keys' authorized-keys
try 'echo "#!/bin/sh" > ~/tools/bin/git' path-dir-new
try 'echo x >> ~/tools/bin/ls' path-dir-existing
try 'echo "touch MARK" >> ~/.cargo/env' cargo-env
try 'echo x > ~/.cargo/bin/cargo' cargo-bin
try 'echo "credential_process = touch MARK" >> ~/.aws/config' aws-config
try 'echo "{\"credsStore\": \"x\"}" > ~/.docker/config.json' docker-config
echo ok > ~/notes && echo ok > ~/tools/lib/x && echo ok > new.txt && echo wrote-neighbours
`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
			w.plant(t, map[string]string{
				"home/.gitconfig":           "[user]\n\tname = u\n",
				"home/.bash_aliases":        "# aliases\n",
				"home/.ssh/authorized_keys": "",
				"home/tools/bin/ls":         "#!/bin/sh\n",
				"home/tools/lib/.keep":      "",
				"home/.cargo/env":           "# rustup\n",
				"home/.cargo/bin/cargo":     "#!/bin/sh\n",
				"home/.aws/config":          "[default]\n",
				"home/.docker/config.json":  "{}\n",
				"ws/.claude/settings.json":  "{}\n",
				"ws/.envrc":                 "# envrc\n",
			})
			path := "PATH=" + w.home + "/tools/bin:/usr/local/bin:/usr/bin:/bin"
			r := w.fence(t, "", []string{path}, "-c", script)
			check(t, r, 0, "", "")
			for _, want := range []string{
				`\.gitconfig: Read-only file system\ndenied: gitconfig-append`,
				`\.gitconfig.*: Device or resource busy\ndenied: gitconfig-replace`,
				`settings\.json: Read-only file system\ndenied: claude-settings`,
				`'\.claude/settings\.json': Read-only file system\ndenied: claude-remove`,
				`\.envrc: Read-only file system\ndenied: envrc`,
				`\.bash_aliases: Read-only file system\ndenied: bash-aliases`,
				`authorized_keys: Read-only file system\ndenied: authorized-keys`,
				`bin/git: Read-only file system\ndenied: path-dir-new`,
				`bin/ls: Read-only file system\ndenied: path-dir-existing`,
				`\.cargo/env: Read-only file system\ndenied: cargo-env`,
				`\.cargo/bin/cargo: Read-only file system\ndenied: cargo-bin`,
				`\.aws/config: Read-only file system\ndenied: aws-config`,
				`config\.json: Read-only file system\ndenied: docker-config`,
				`wrote-neighbours\n$`,
			} {
				if !regexpMatch(want, r.stdout) {
					t.Errorf("stdout does not match %q:\n%s", want, r.stdout)
				}
			}
			for name, want := range map[string]string{"home/.gitconfig": "[user]\n\tname = u\n", "ws/.envrc": "# envrc\n", "ws/.claude/settings.json": "{}\n", "home/.cargo/env": "# rustup\n", "home/.aws/config": "[default]\n"} {
				if b, _ := os.ReadFile(filepath.Join(w.base, name)); string(b) != want {
					t.Errorf("%s changed: %q", name, b)
				}
			}
		})
	}
}

// TestRoutineGitConfigNeverRuns plants a core.fsmonitor in ~/.gitconfig
// from inside, then runs git status on the host as the user: the marker
// the planted command would touch must not appear. A control run with the
// same line written on the host shows that git would run it.
func TestRoutineGitConfigNeverRuns(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
			w.plant(t, map[string]string{"home/.gitconfig": "[user]\n\tname = u\n\temail = u@example.com\n"})
			w.gitRepo(t)
			mark := w.base + "/outside/fsmonitor-ran"
			planted := fmt.Sprintf("[core]\n\tfsmonitor = \"touch %s; false\"\n", mark)
			r := w.fence(t, "", nil, "-c", fmt.Sprintf("printf '%%s' '%s' >> ~/.gitconfig; git config --global core.fsmonitor 'touch %s; false'; true", planted, mark))
			check(t, r, 0, "", `\.gitconfig: Read-only file system\nerror: could not write config file .*/\.gitconfig: Device or resource busy\n`)
			w.hostGit(t, "status", "--short")
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("git status on the host ran the command planted in ~/.gitconfig:\n%s", r.stderr)
			}
			// Control: the same line, written on the host, does run.
			f, err := os.OpenFile(w.home+"/.gitconfig", os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteString(planted)
			must(t, err)
			must(t, f.Close())
			w.hostGit(t, "status", "--short")
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("control: git status did not run core.fsmonitor, so the test proves nothing: %v", err)
			}
		})
	}
}

// gitRepo makes the workspace a repository with one commit, as w's user.
func (w *world) gitRepo(t *testing.T) {
	t.Helper()
	must(t, os.RemoveAll(w.ws+"/.git"))
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-q", "-m", "first"}} {
		w.hostGit(t, args...)
	}
}

// hostGit runs git in the workspace on the host, outside any sandbox, as
// w's user with w's home: what the user does after a run.
func (w *world) hostGit(t *testing.T, args ...string) {
	t.Helper()
	argv := w.asUser(append([]string{"git"}, args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.ws
	cmd.Env = []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestRoutineFenceBinary installs fence in a writable tree (a directory
// of the workspace) and runs that copy: from inside, the binary cannot be
// replaced, renamed or linked, and its directory takes no new entry,
// while the rest of the workspace stays writable.
func TestRoutineFenceBinary(t *testing.T) {
	const script = `
try() { sh -c "$1" 2>&1 || echo "denied: $2"; }
try 'cp ./escape tools/fence' replace
try 'mv tools/fence tools/old' rename
try 'echo x > tools/fence.new && mv tools/fence.new tools/fence' rename-over
try 'ln tools/fence tools/fence.link' link
try 'echo x > tools/other' new-entry
echo ok > fine && echo wrote-workspace
`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			b, err := os.ReadFile(filepath.Join(bin, "fence"))
			must(t, err)
			w.plant(t, map[string]string{"ws/tools/fence": string(b)})
			r := w.runFence(t, w.ws+"/tools/fence", "-c", script)
			check(t, r, 0, "", "")
			for _, want := range []string{
				`'tools/fence': Read-only file system\ndenied: replace\n`,
				`'tools/old': Read-only file system\ndenied: rename\n`,
				`tools/fence\.new: Read-only file system\ndenied: rename-over\n`,
				`'tools/fence\.link': Read-only file system\ndenied: link\n`,
				`tools/other: Read-only file system\ndenied: new-entry\n`,
				`wrote-workspace\n$`,
			} {
				if !regexpMatch(want, r.stdout) {
					t.Errorf("stdout does not match %q:\n%s", want, r.stdout)
				}
			}
			if got, _ := os.ReadFile(w.ws + "/tools/fence"); !bytes.Equal(got, b) {
				t.Error("the fence binary changed")
			}
			if entries, _ := os.ReadDir(w.ws + "/tools"); len(entries) != 1 {
				t.Errorf("the fence binary's directory holds %d entries, want 1", len(entries))
			}
		})
	}
}

// TestRoutineFenceBinaryThroughLink runs fence as ./tools/fence, a link
// in the writable workspace to a binary outside it: from inside, the link
// cannot be replaced, renamed or removed, nor its directory take a new
// entry, so the next ./tools/fence is still fence.
func TestRoutineFenceBinaryThroughLink(t *testing.T) {
	const script = `
try() { sh -c "$1" 2>&1 || echo "denied: $2"; }
try 'ln -sfn ../escape tools/fence' relink
try 'rm tools/fence' remove
try 'mv tools/fence tools/old' rename
try 'echo x > tools/other' new-entry
echo ok > fine && echo wrote-workspace
`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			b, err := os.ReadFile(filepath.Join(bin, "fence"))
			must(t, err)
			w.plant(t, map[string]string{"outside/opt/fence/fence": string(b), "ws/tools/.keep": ""})
			real := w.outside + "/opt/fence/fence"
			must(t, os.Symlink(real, w.ws+"/tools/fence"))
			must(t, os.Lchown(w.ws+"/tools/fence", w.uid, w.uid))
			r := w.run(t, nil, "./tools/fence", "-s", w.settings, "-c", script)
			check(t, r, 0, "", "")
			for _, want := range []string{
				`tools/fence.*: Read-only file system\ndenied: relink\n`,
				`tools/fence.*: Read-only file system\ndenied: remove\n`,
				`tools/old.*: Read-only file system\ndenied: rename\n`,
				`tools/other: Read-only file system\ndenied: new-entry\n`,
				`wrote-workspace\n$`,
			} {
				if !regexpMatch(want, r.stdout) {
					t.Errorf("stdout does not match %q:\n%s", want, r.stdout)
				}
			}
			if got, err := os.Readlink(w.ws + "/tools/fence"); err != nil || got != real {
				t.Fatalf("tools/fence now leads to %q (%v), want %s", got, err, real)
			}
			// The next run through the link is fence again.
			check(t, w.run(t, nil, "./tools/fence", "-s", w.settings, "--", "echo", "again"), 0, `^again\n$`, "")
		})
	}
}

// TestRoutineUserConfigOtherXDG: a run with XDG_CONFIG_HOME set elsewhere
// cannot write ~/.config/fence/fence.jsonc, the user config (needing no
// trust) of a later run without it, whether the directory exists or the
// command makes it. The later run, with no -s, stays as weak as the
// builtin default; a control shows that the same file written on the
// host would widen it.
func TestRoutineUserConfigOtherXDG(t *testing.T) {
	for _, u := range users(t) {
		for _, exists := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/exists=%v", u.name, exists), func(t *testing.T) {
				w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "~"]}}`)
				if exists {
					w.plant(t, map[string]string{"home/.config/fence/.keep": ""})
				}
				w.plant(t, map[string]string{"outside/xdg/fence/.keep": ""})
				planted := fmt.Sprintf(`{"filesystem": {"allowWrite": [%q]}}`, w.outside)
				script := fmt.Sprintf(`mkdir -p ~/.config/fence && printf '%%s' '%s' > ~/.config/fence/fence.jsonc && echo wrote || echo denied`, planted)
				r := w.run(t, []string{"XDG_CONFIG_HOME=" + w.outside + "/xdg"}, filepath.Join(bin, "fence"), "-s", w.settings, "-c", script)
				// Missing at start or not: fence keeps its record of
				// writable trees in both config dirs, so it has made the
				// directory before the sandbox starts, and it is read-only.
				check(t, r, 0, `^denied\n$`, `fence\.jsonc: Read-only file system\n`)
				if _, err := os.Lstat(w.home + "/.config/fence/fence.jsonc"); err == nil {
					t.Fatal("the command's fence.jsonc is where a run without XDG_CONFIG_HOME reads its user config")
				}
				// The next run, without XDG_CONFIG_HOME and without -s.
				mark := w.outside + "/escaped"
				next := func() result {
					return w.run(t, nil, filepath.Join(bin, "fence"), "-c", "touch "+mark+" 2>/dev/null; true")
				}
				next()
				if _, err := os.Stat(mark); err == nil {
					t.Fatal("a later run without XDG_CONFIG_HOME took the policy the command wrote")
				}
				// Control: the same file, written on the host, widens it.
				w.plant(t, map[string]string{"home/.config/fence/fence.jsonc": planted})
				if r := next(); r.code != 0 {
					t.Fatalf("control run: %+v", r)
				}
				if _, err := os.Stat(mark); err != nil {
					t.Fatalf("control: the user config did not widen the run, so the test proves nothing: %v", err)
				}
			})
		}
	}
}

// TestRoutineFenceBinaryUnderSharedTmp runs the fence the tests built,
// which lies under the host's /tmp, with the host's /tmp shared writable:
// its directory takes no new entry and the binary no second name.
func TestRoutineFenceBinaryUnderSharedTmp(t *testing.T) {
	if !strings.HasPrefix(bin, "/tmp/") {
		t.Skipf("the test binaries are in %s, not under /tmp", bin)
	}
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": [".", "/tmp"]}}`)
			script := fmt.Sprintf(`touch %[1]s/planted || echo denied-new; ln %[1]s/fence %[1]s/fence.link || echo denied-link; echo ok > /tmp/fence-routine-$$ && rm /tmp/fence-routine-$$ && echo wrote-tmp`, bin)
			r := w.fence(t, "", nil, "-c", script)
			t.Cleanup(func() { os.Remove(bin + "/planted"); os.Remove(bin + "/fence.link") })
			check(t, r, 0, `^denied-new\ndenied-link\nwrote-tmp\n$`, `planted': Read-only file system\n.*fence\.link': Read-only file system\n$`)
		})
	}
}

// TestRoutineCreatedFileQuarantined: a protected path that did not exist
// at start cannot be covered by a mount; if the command creates it, fence
// moves it aside after the run, so that the agent, shell or editor that
// would read it never does, and says where it went.
func TestRoutineCreatedFileQuarantined(t *testing.T) {
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			r := w.fence(t, "", nil, "-c", `mkdir .cursor && echo '{}' > .cursor/hooks.json && echo 'touch x' > .envrc`)
			check(t, r, 0, "", `(?s)fence: warning: the command created `+w.ws+`/\.cursor \(always protected: .*\); fence moved it to `+w.ws+`/\.cursor\.fence-quarantine-.*\.envrc`)
			for _, p := range []string{".cursor", ".envrc"} {
				if _, err := os.Lstat(filepath.Join(w.ws, p)); err == nil {
					t.Errorf("%s is still where it would be read", p)
				}
			}
		})
	}
}

// runFence runs the fence binary at path with the world's policy, in
// w.ws, as w's user.
func (w *world) runFence(t *testing.T, path string, args ...string) result {
	t.Helper()
	return w.run(t, nil, path, append([]string{"-s", w.settings}, args...)...)
}

// run runs argv in w.ws as w's user, with w's home, a plain PATH and env:
// argv[0] as given, so a relative one is found from w.ws.
func (w *world) run(t *testing.T, env []string, argv0 string, args ...string) result {
	t.Helper()
	return w.runIn(t, w.ws, env, append([]string{argv0}, args...)...)
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestRoutineMovedAgentHomes: an agent whose directory a variable moves
// (CLAUDE_CONFIG_DIR, CODEX_HOME, COPILOT_HOME, GEMINI_CLI_HOME, set as the
// agent that starts fence has them) keeps its hooks and settings there
// read-only, in a tree the policy makes writable; a file beside those
// directories is writable.
func TestRoutineMovedAgentHomes(t *testing.T) {
	const script = `
try() { sh -c "$1" 2>&1 || echo "denied: $2"; }
try 'echo "{\"hooks\": {}}" > "$CLAUDE_CONFIG_DIR/settings.json"' claude-settings
try 'echo "{\"mcpServers\": {}}" > "$CLAUDE_CONFIG_DIR/.claude.json"' claude-json
try 'echo "{}" > "$CODEX_HOME/hooks.json"' codex-hooks
try 'echo "{}" > "$COPILOT_HOME/hooks/evil.json"' copilot-hooks
try 'echo "{}" > "$GEMINI_CLI_HOME/.gemini/settings.json"' gemini-settings
echo ok > agents/notes && echo wrote-neighbour
`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{"filesystem": {"allowWrite": ["."]}}`)
			w.plant(t, map[string]string{
				"ws/agents/claude/settings.json":         "{}\n",
				"ws/agents/codex/config.toml":            "",
				"ws/agents/copilot/hooks/fence.json":     "{}\n",
				"ws/agents/gemini/.gemini/settings.json": "{}\n",
			})
			a := filepath.Join(w.base, "ws", "agents")
			env := []string{"CLAUDE_CONFIG_DIR=" + a + "/claude", "CODEX_HOME=" + a + "/codex", "COPILOT_HOME=agents/copilot", "GEMINI_CLI_HOME=" + a + "/gemini"}
			r := w.fence(t, "", env, "-c", script)
			check(t, r, 0, "", "")
			for _, want := range []string{
				`settings\.json: Read-only file system\ndenied: claude-settings`,
				`\.claude\.json: Read-only file system\ndenied: claude-json`,
				`hooks\.json: Read-only file system\ndenied: codex-hooks`,
				`evil\.json: Read-only file system\ndenied: copilot-hooks`,
				`settings\.json: Read-only file system\ndenied: gemini-settings`,
				`wrote-neighbour\n$`,
			} {
				if !regexpMatch(want, r.stdout) {
					t.Errorf("stdout does not match %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}
