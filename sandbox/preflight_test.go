package sandbox

import (
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

func commandPolicy(dynamic string) *policy.Policy {
	return policy.Compile(policy.Config{Command: policy.Command{
		Deny:    []string{"git push", "npm publish", "sudo", "python2", `say it's`},
		Allow:   []string{"git push --dry-run"},
		Dynamic: dynamic,
	}}, policy.Env{Dir: "/w", Home: "/h", Origin: func(key, value string) string { return "test config" }})
}

// TestPreflight is the verdict on each shell string: "" for allowed, the
// deny rule for blocked, "dynamic" for what preflight cannot see through
// (blocked only when command.dynamic is "deny").
func TestPreflight(t *testing.T) {
	tests := []struct{ src, want string }{
		// plain commands and rule shapes
		{"git push", "git push"},
		{"git push origin main", "git push"},
		{"git status", ""},
		{"git pull --rebase", ""},
		{"ls -la", ""},
		{"git -C dir push", "git push"},
		{"git --no-pager push", "git push"},
		{"git -c user.name=x push", "git push"},
		{"GIT_DIR=x git -C y push origin", "git push"},
		{"git push --dry-run", ""},
		{"git push --dry-run origin main", ""},
		{"git push --dry-run; git push", "git push"},
		{"/usr/bin/git push", "git push"},
		{"./git push", "git push"},
		{`'git' "push"`, "git push"},
		{`g\it pu\sh`, "git push"},
		{"git\\\n push", "git push"},
		{"npm publish", "npm publish"},
		{"npm --registry x publish", "npm publish"},
		{"npm install", ""},
		{"python2 x.py", "python2"},
		{"python3 x.py", ""},
		// lists, pipelines, groups, substitutions, bodies
		{"echo hi; git push", "git push"},
		{"true && git push", "git push"},
		{"false || git push", "git push"},
		{"echo x | git push", "git push"},
		{"git push &", "git push"},
		{"! git push", "git push"},
		{"git push 2>/dev/null >out", "git push"},
		{"(git push)", "git push"},
		{"{ git push; }", "git push"},
		{"echo $(git push)", "git push"},
		{"echo `git push`", "git push"},
		{"cat <(git push)", "git push"},
		{"diff <(ls) >(git push)", "git push"},
		{"f() { git push; }; f", "git push"},
		{"function f { git push; }", "git push"},
		{"if true; then git push; fi", "git push"},
		{"if git push; then :; fi", "git push"},
		{"while false; do git push; done", "git push"},
		{"until true; do git push; done", "git push"},
		{"for i in 1 2; do git push; done", "git push"},
		{"for ((i=0;i<1;i++)); do git push; done", "git push"},
		{"case x in x) git push;; esac", "git push"},
		{"select x in a; do git push; done", "git push"},
		{"coproc git push", "git push"},
		{"time git push", "git push"},
		{"time -p git push", "git push"},
		{"VAR=$(git push) true", "git push"},
		{"echo ${x:-$(git push)}", "git push"},
		{"[[ -n $(git push) ]]", "git push"},
		{"arr=(a $(git push))", "git push"},
		{"echo a\ngit push\necho b", "git push"},
		{"echo \"$(git push)\"", "git push"},
		// nested shells and eval
		{"bash -c 'git push'", "git push"},
		// a fence inside the sandbox runs what the outer rules judge
		{"fence -c 'git push'", "git push"},
		{"'fence' -s ./open.json -c 'git push'", "git push"},
		{"\"/usr/local/bin/fence\" --settings=x -c 'git push origin'", "git push"},
		{"env fence -t code -c 'git push'", "git push"},
		{"fence -dc 'git push'", "git push"},
		{"fence --command='git push'", "git push"},
		{"fence --command 'echo; git push'", "git push"},
		{"fence -s x -- git push", "git push"},
		{"fence -s x git push", "git push"},
		{"fence --no-network git push", "git push"},
		{"fence --unknown-flag git push", "git push"},
		{"fence -s git -- ls", ""},
		{"fence -t code -c 'ls'", ""},
		{"fence -c ls", ""},
		{"fence --policy-dir /w -c 'cd src && go test ./...'", ""},
		{"fence -s open.json -c 'echo ok' -c 'git push'", "git push"},
		{"fence --command 'echo ok' --command 'git push'", "git push"},
		{"fence -s open.json -c='git push origin'", "git push"},
		{"fence -mc='git push'", "git push"},
		{"fence -c '' -- git push", "git push"},
		{"fence --command= git push", "git push"},
		{"fence -c true -c 'git push' -s open.json", "git push"},
		{"$'git' push origin", "git push"},
		{"$'\\x67it' push", "git push"},
		{"$'g\\151t' push", "git push"},
		{"$'fence' -s open.json -c 'git push'", "git push"},
		{"flock /tmp/l git push", "git push"},
		{"flock -w 3 /tmp/l -c 'git push'", "git push"},
		{"script -qc 'git push' /dev/null", "git push"},
		{"sh -lc 'git push'", "git push"},
		{"zsh -c \"git push\"", "git push"},
		{"dash -c 'cd x && git push'", "git push"},
		{"bash -o pipefail -c 'git push'", "git push"},
		{"bash --norc -c 'git push'", "git push"},
		{"bash -c \"sh -c 'git push'\"", "git push"},
		{"bash -c 'bash -c \"bash -c \\\"git push\\\"\"'", "git push"},
		{"busybox sh -c 'git push'", "git push"},
		{"eval 'git push'", "git push"},
		{"eval git push", "git push"},
		{"eval 'echo a; git push'", "git push"},
		{"bash script.sh", ""},
		{"bash", ""},
		{"bash -c 'git status'", ""},
		// wrappers
		{"env git push", "git push"},
		{"env FOO=bar git push", "git push"},
		{"env -i PATH=/bin git push", "git push"},
		{"env -u HOME git push", "git push"},
		{"FOO=bar git push", "git push"},
		{"command git push", "git push"},
		{"command -v git", ""},
		{"exec git push", "git push"},
		{"exec -a name git push", "git push"},
		{"nice git push", "git push"},
		{"nice -n 10 git push", "git push"},
		{"nohup git push", "git push"},
		{"timeout 10 git push", "git push"},
		{"timeout -s KILL 10 git push", "git push"},
		{"stdbuf -oL git push", "git push"},
		{"xargs git push", "git push"},
		{"echo a | xargs -n 1 git push", "git push"},
		{"xargs -I{} git push {}", "git push"},
		{"setsid git push", "git push"},
		{"sudo ls", "sudo"},
		{"sudo -u root ls", "sudo"},
		{"doas git push", "git push"},
		{"doas git status", ""},
		{"find . -exec git push \\;", "git push"},
		{"find . -execdir git push {} +", "git push"},
		{"find . -name x -delete", ""},
		// builtin defaults
		{"shutdown -h now", "shutdown"},
		{"reboot", "reboot"},
		{"init 0", "init 0"},
		{"init 3", ""},
		{"systemctl reboot", "systemctl reboot"},
		{"systemctl --user reboot", "systemctl reboot"},
		{"systemctl status", ""},
		{"insmod x.ko", "insmod"},
		{"modprobe -r x", "modprobe"},
		{"mkfs /dev/sda", "mkfs"},
		{"mkfs.ext4 /dev/sda", "mkfs.*"},
		{"dd if=/dev/zero of=x", "dd if="},
		{"dd of=x bs=1", ""},
		{"docker run --privileged ubuntu", "docker run --privileged"},
		{"docker --debug run --privileged ubuntu", "docker run --privileged"},
		{"docker run --rm --privileged ubuntu", "docker run --privileged"},
		{"docker run -v /:/ ubuntu", "docker run -v /:/"},
		{"docker run ubuntu", ""},
		{"docker ps", ""},
		{"chroot /x", "chroot"},
		{"unshare -r bash", "unshare"},
		{"nsenter -t 1", "nsenter"},
		// text that only mentions a command
		{"echo 'git push'", ""},
		{"git commit -m 'git push'", ""},
		{"# git push", ""},
		{"cat <<EOF\ngit push\nEOF", ""},
		{"printf '%s' sudo", ""},
		// what preflight cannot see through
		{"$cmd push", "dynamic"},
		{"${GIT:-git} push", "dynamic"},
		{"eval \"$x\"", "dynamic"},
		{"git $sub", "dynamic"},
		{"git pu{sh,ll}", "dynamic"},
		{"git pu{s..t}h", "dynamic"},
		{"/usr/bin/g?t push", "dynamic"},
		{"git add *.go", ""},
		{"ls $dir", ""},
		{"bash -c \"$script\"", "dynamic"},
		{"unclosed 'quote", "dynamic"},
		{"echo $(", "dynamic"},
	}
	for _, dyn := range []string{"allow", "deny"} {
		p := commandPolicy(dyn)
		for _, tt := range tests {
			v := PreflightShell(p, tt.src)
			got := ""
			switch {
			case v.Rule != nil:
				got = v.Rule.Text
			case v.Blocked:
				got = "dynamic"
			}
			want := tt.want
			if want == "dynamic" && dyn == "allow" {
				want = ""
			}
			if got != want {
				t.Errorf("dynamic=%s: PreflightShell(%q) = %q (%s), want %q", dyn, tt.src, got, v.Message(), want)
			}
			full := (&preflight{pol: p, unscreened: true}).shell(tt.src, lazyText{text: tt.src}, 0)
			if full.Blocked != v.Blocked || full.Rule != v.Rule {
				t.Errorf("dynamic=%s: %q is %q with the text screen, %q without", dyn, tt.src, v.Message(), full.Message())
			}
		}
	}
	if len(tests) < 100 {
		t.Errorf("only %d cases", len(tests))
	}
}

func TestPreflightMessage(t *testing.T) {
	v := PreflightShell(commandPolicy("allow"), "cd x && git push origin main")
	if want := `blocked "git push origin main": matches command.deny "git push" (test config)`; v.Message() != want {
		t.Errorf("Message() = %q, want %q", v.Message(), want)
	}
	v = PreflightShell(commandPolicy("deny"), "$cmd push")
	if want := `blocked "$cmd push": preflight cannot see what it runs (a command name built at run time), and command.dynamic is "deny"`; v.Message() != want {
		t.Errorf("Message() = %q, want %q", v.Message(), want)
	}
	v = PreflightShell(commandPolicy("allow"), "reboot")
	if !strings.HasSuffix(v.Message(), `(builtin defaults (command.useDefaults))`) {
		t.Errorf("Message() = %q, want the builtin defaults named", v.Message())
	}
}

func TestPreflightArgv(t *testing.T) {
	p := commandPolicy("allow")
	tests := []struct {
		argv    []string
		blocked bool
	}{
		{[]string{"git", "push", "origin"}, true},
		{[]string{"git", "status"}, false},
		{[]string{"bash", "-c", "git push"}, true},
		{[]string{"env", "git", "push"}, true},
		{[]string{"echo", "git", "push"}, false},
		{[]string{"git", "$(not a substitution in argv)", "status"}, false},
	}
	for _, tt := range tests {
		if v := PreflightArgv(p, tt.argv); v.Blocked != tt.blocked {
			t.Errorf("PreflightArgv(%q) blocked = %v, want %v", tt.argv, v.Blocked, tt.blocked)
		}
	}
}

// TestMayDeny pins the text screen: a rule passes it when all its words
// are in the text, however they are quoted, and not otherwise.
func TestMayDeny(t *testing.T) {
	p := policy.Compile(policy.Config{Command: policy.Command{
		Deny:        []string{"git push", "mkfs.*", "dd if=", "docker run --privileged", `say it's`},
		UseDefaults: new(bool),
	}}, policy.Env{})
	tests := []struct {
		src  string
		want bool
	}{
		{"git status", false},
		{"git push", true},
		{"cd x && /usr/bin/git -C d push origin", true},
		{"g'i't p\"u\"sh", true},
		{"git pu\\\nsh", true},
		{"git pushx; xgit", false},
		{"git_push", false},
		{"echo push; git log", true}, // both words are there: parse to be sure
		{"mkfs.ext4 /dev/x", true},
		{"mkfs /dev/x", false},
		{"dd of=x", false},
		{"dd i\\f=/dev/zero", true},
		{"docker run --privileged=true x", true},
		{"docker run x", false},
		{"", false},
		{`say it\'s`, true}, // the word is "it's", as in the rule
		{`say "it's"`, true},
		{"say its", true}, // over-approximates: parsed, then allowed
		{"say it", false},
	}
	for _, tt := range tests {
		if got := mayDeny(p, tt.src); got != tt.want {
			t.Errorf("mayDeny(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
	if v := PreflightShell(p, `say it\'s`); v.Rule == nil || v.Rule.Text != `say it's` {
		t.Errorf("a rule word holding a quote: %+v, want blocked by it", v)
	}
	ssh := policy.Compile(policy.Config{SSH: policy.SSH{AllowedHosts: []string{"h"}}, Command: policy.Command{UseDefaults: new(bool)}}, policy.Env{})
	if !mayDeny(ssh, "ssh evil") || !mayDeny(ssh, "git clone git@evil:x") || mayDeny(ssh, "ls") {
		t.Errorf("the ssh section's names do not pass the screen as they should")
	}
}

func TestUseDefaultsOff(t *testing.T) {
	off := false
	p := policy.Compile(policy.Config{Command: policy.Command{UseDefaults: &off}}, policy.Env{})
	if v := PreflightShell(p, "reboot; chroot /x"); v.Blocked {
		t.Errorf("useDefaults false still blocks: %s", v.Message())
	}
}

// BenchmarkPreflight2KB judges a 2 KB compound command: lists, pipes,
// substitutions, a nested shell and wrappers. "parsed" holds the words
// of a deny rule (in an allowed `git push --dry-run`), so every command
// is parsed and judged; "screened" holds none, and the text screen
// passes it without parsing.
func BenchmarkPreflight2KB(b *testing.B) {
	unit := `cd /repo && git status --short | grep -v '^??' && npm ci --no-audit && FOO=1 env BAR=2 nice -n 5 make -j4 test 2>&1 | tee log; for f in $(ls src/*.go); do gofmt -l "$f"; done; bash -c 'go vet ./... && echo ok'; `
	for _, bb := range []struct{ name, last string }{
		{"parsed", "git push --dry-run origin;"},
		{"screened", "git status;"},
	} {
		src := strings.Repeat(unit, 2048/len(unit)+1)[:2048-len(bb.last)]
		src = src[:strings.LastIndex(src, ";")+1] + bb.last
		p := commandPolicy("allow")
		if v := PreflightShell(p, src); v.Blocked {
			b.Fatalf("the benchmark command is blocked: %s", v.Message())
		}
		if mayDeny(p, src) != (bb.name == "parsed") {
			b.Fatalf("%s: the text screen does not do what the benchmark is about", bb.name)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				PreflightShell(p, src)
			}
		})
	}
}

func TestPreflightSSH(t *testing.T) {
	p := policy.Compile(policy.Config{
		SSH: policy.SSH{
			AllowedHosts:    []string{"*.example.com", "git@github.com"},
			DeniedHosts:     []string{"prod.example.com"},
			AllowedCommands: []string{"ls", "git-upload-pack"},
			DeniedCommands:  []string{"rm -rf"},
			InheritDeny:     true,
		},
		Command: policy.Command{Deny: []string{"git push"}},
	}, policy.Env{})
	tests := []struct{ src, want string }{
		{"ssh dev.example.com", ""},
		{"ssh user@DEV.example.com", ""},
		{"ssh -p 2222 -i key dev.example.com ls -la", ""},
		{"ssh -p2222 ssh://u@dev.example.com:22 ls", ""},
		{"ssh evil.com", "host evil.com is not in ssh.allowedHosts"},
		{"ssh prod.example.com", `host prod.example.com matches ssh.deniedHosts "prod.example.com"`},
		{"ssh dev.example.com cat /etc/passwd", "the remote command is not in ssh.allowedCommands (or set ssh.allowAllCommands)"},
		{"ssh dev.example.com 'ls && cat /etc/passwd'", "the remote command is not in ssh.allowedCommands (or set ssh.allowAllCommands)"},
		{"ssh dev.example.com rm -rf /", `matches ssh.deniedCommands "rm -rf"`},
		{"ssh -t dev.example.com 'ls; git push'", ""}, // allowedCommands matches "ls"; inheritDeny then finds git push
		{"ssh -V", ""},
		{"ssh $HOST", "dynamic"},
		{"echo x | ssh dev.example.com git-upload-pack repo", ""},
		{"git clone git@dev.example.com:org/repo.git", ""},
		{"git clone git@evil.com:org/repo.git", "host evil.com is not in ssh.allowedHosts (a git remote over ssh)"},
		{"git fetch ssh://git@evil.com:22/org/repo", "host evil.com is not in ssh.allowedHosts (a git remote over ssh)"},
		{"git clone https://evil.com/org/repo", ""},
		{"git log -- src:main.go", ""},
	}
	for _, tt := range tests {
		v := PreflightShell(p, tt.src)
		got := v.Reason
		if v.Rule != nil {
			got = "rule " + v.Rule.Text
		}
		want := tt.want
		if tt.src == "ssh -t dev.example.com 'ls; git push'" {
			want = "rule git push"
		}
		if want == "dynamic" {
			want = "" // command.dynamic is allow here
		}
		if got != want {
			t.Errorf("PreflightShell(%q) = %q (%s), want %q", tt.src, got, v.Message(), want)
		}
	}
	if v := PreflightShell(policy.Compile(policy.Config{}, policy.Env{}), "ssh anywhere.example rm -rf /"); v.Blocked {
		t.Errorf("ssh rules apply without an ssh section: %s", v.Message())
	}
}

// TestPreflightGitForms: the lines that ask for a push without the word
// itself reach the rule (the quick search for the rule's words does not
// skip them), and an everyday git line stays allowed.
func TestPreflightGitForms(t *testing.T) {
	p := policy.Compile(policy.Config{Command: policy.Command{Deny: []string{"git push"}}}, policy.Env{Dir: "/w", Home: "/h"})
	for src, blocked := range map[string]bool{
		"git send-pack origin main":                                                 true,
		"cd /w && /usr/lib/git-core/git-send-pack x":                                true,
		"git -c alias.x=push x":                                                     true,
		"/usr/lib/git-core/git-push origin":                                         true,
		"git status && git log -1":                                                  false,
		"git -c help.autocorrect=1 psuh":                                            true,
		"exec -a git-push git origin":                                               true,
		"env -S 'git push' origin":                                                  true,
		"timeout --signal KILL 50 git push":                                         true,
		"nice --adjustment 5 git push":                                              true,
		"xargs --max-args 1 git push < /dev/null":                                   true,
		"stdbuf --output L git push":                                                true,
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p": true,
		"export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p origin":      true,
		"GIT_CONFIG_KEY_0=alias.p; GIT_CONFIG_VALUE_0=push; export GIT_CONFIG_COUNT=1; bash -c 'git p'": true,
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.s GIT_CONFIG_VALUE_0=status git s":                   false,
	} {
		if v := PreflightShell(p, src); v.Blocked != blocked {
			t.Errorf("PreflightShell(%q) blocked %v, want %v", src, v.Blocked, blocked)
		}
	}
}

// TestPreflightEnvSplit: env -S glued to its string still reaches the
// rules, though the screen cannot see the command's name as a word.
func TestPreflightEnvSplit(t *testing.T) {
	p := policy.Compile(policy.Config{Command: policy.Command{Deny: []string{"git push"}}}, policy.Env{Dir: "/w", Home: "/h"})
	for _, src := range []string{"env '-Sgit push'", `env -Sgit\ push origin`, "env --split-string='git push'"} {
		if v := PreflightShell(p, src); !v.Blocked {
			t.Errorf("PreflightShell(%q) not blocked", src)
		}
	}
}
