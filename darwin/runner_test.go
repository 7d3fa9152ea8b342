package darwin

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/sandbox"
)

// exited and killed are wait statuses as wait4 reports them.
func exited(n int) syscall.WaitStatus            { return syscall.WaitStatus(n << 8) }
func killed(s syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(s) }

func TestExitCode(t *testing.T) {
	tests := []struct {
		name   string
		end    runEnd
		code   int
		errHas string // "" for no error
	}{
		{"command's status", runEnd{status: exited(3), execd: true}, 3, ""},
		{"command's success", runEnd{status: exited(0), execd: true}, 0, ""},
		{"command's own 65", runEnd{status: exited(65), execd: true}, 65, ""},
		{"command's own 71", runEnd{status: exited(71), execd: true}, 71, ""},
		{"command killed", runEnd{status: killed(syscall.SIGINT), execd: true}, 128 + int(syscall.SIGINT), ""},
		{"command crashed", runEnd{status: killed(syscall.SIGABRT), execd: true}, 128 + int(syscall.SIGABRT), ""},
		{"profile rejected", runEnd{status: exited(65)}, sandbox.ExitFenceError, "rejected the profile"},
		{"not applied or not executed", runEnd{status: exited(71)}, sandbox.ExitFenceError, "sandbox_apply"},
		{"bad invocation", runEnd{status: exited(64)}, sandbox.ExitFenceError, "fence bug"},
		{"other status before exec", runEnd{status: exited(1)}, sandbox.ExitFenceError, "status 1"},
		{"success before exec", runEnd{status: exited(0)}, sandbox.ExitFenceError, "status 0"},
		{"interrupted before exec", runEnd{status: killed(syscall.SIGINT)}, 128 + int(syscall.SIGINT), ""},
		{"sandbox-exec crashed", runEnd{status: killed(syscall.SIGABRT)}, sandbox.ExitFenceError, "crashed"},
		{"timeout", runEnd{status: killed(syscall.SIGKILL), execd: true, timedOut: true}, sandbox.ExitTimeout, ""},
		{"timeout before exec", runEnd{status: killed(syscall.SIGKILL), timedOut: true}, sandbox.ExitTimeout, ""},
		{"wait failed", runEnd{waitErr: syscall.ECHILD, execd: true}, sandbox.ExitFenceError, "wait for the command"},
	}
	for _, tt := range tests {
		code, err := tt.end.exitCode()
		if code != tt.code {
			t.Errorf("%s: exitCode() = %d, want %d", tt.name, code, tt.code)
		}
		switch {
		case tt.errHas == "" && err != nil:
			t.Errorf("%s: exitCode() error = %v, want none", tt.name, err)
		case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
			t.Errorf("%s: exitCode() error = %v, want one containing %q", tt.name, err, tt.errHas)
		case err != nil && !strings.HasPrefix(err.Error(), "sandbox-exec ended before it started the command") && tt.end.waitErr == nil:
			t.Errorf("%s: exitCode() error = %q, want it to say sandbox-exec did not start the command", tt.name, err)
		}
	}
}

func TestExecSight(t *testing.T) {
	tests := []struct {
		name  string
		sight execSight
		want  bool
	}{
		{"exec seen by the watch", execSight{read: true, comm: "sandbox-exec", watched: true, noted: true}, true},
		{"no exec seen by the watch", execSight{read: true, comm: "sandbox-exec", watched: true}, false},
		{"no exec, ended before the watch", execSight{read: true, comm: "sandbox-exec", zombie: true, watched: true}, false},
		{"executed before the watch", execSight{read: true, comm: "ls", watched: true}, true},
		{"executed and ended before the watch", execSight{read: true, comm: "true", zombie: true}, true},
		{"ended unwatched as sandbox-exec", execSight{read: true, comm: "sandbox-exec", zombie: true}, false},
		{"unwatched and still sandbox-exec: cannot tell", execSight{read: true, comm: "sandbox-exec"}, true},
		{"name unread: cannot tell", execSight{watched: true}, true},
		{"name unread, unwatched", execSight{zombie: true}, true},
		{"a command named sandbox-exec, executed before the watch", execSight{read: true, comm: "sandbox-exec", path: "./sandbox-exec", watched: true}, true},
		{"sandbox-exec itself, by its path", execSight{read: true, comm: "sandbox-exec", path: "/usr/bin/sandbox-exec", watched: true}, false},
	}
	for _, tt := range tests {
		if got := tt.sight.execd(); got != tt.want {
			t.Errorf("%s: %+v.execd() = %v, want %v", tt.name, tt.sight, got, tt.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		name   string
		plan   sandbox.Plan
		errHas string
	}{
		{"plain", sandbox.Plan{}, ""},
		{"timeout only", sandbox.Plan{Limits: policy.RunLimits{Timeout: time.Second}}, ""},
		{"proxy without forwards", sandbox.Plan{Proxy: &sandbox.Proxy{HTTPPort: 1}}, ""},
		{"resource limit", sandbox.Plan{Limits: policy.RunLimits{Timeout: time.Second, Processes: 5}}, "limits.timeout only"},
		{"exec wrapper judging", sandbox.Plan{ExecArgv: true}, `runtimeExecPolicy "argv"`},
		{"port forward", sandbox.Plan{Proxy: &sandbox.Proxy{Forwards: []sandbox.Forward{{HostAddr: "127.0.0.1", Port: 8080}}}}, "-p (exposing port 8080"},
	}
	for _, tt := range tests {
		err := refusal(&tt.plan)
		switch {
		case tt.errHas == "" && err != nil:
			t.Errorf("%s: refusal() = %v, want nil", tt.name, err)
		case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
			t.Errorf("%s: refusal() = %v, want one containing %q", tt.name, err, tt.errHas)
		case err != nil && !strings.HasPrefix(err.Error(), "refusing to run: "):
			t.Errorf("%s: refusal() = %q, want it to start \"refusing to run: \"", tt.name, err)
		}
	}
}

func TestRunTag(t *testing.T) {
	a, b := newRunTag(), newRunTag()
	if !regexp.MustCompile(`^fence-[0-9a-f]{16}$`).MatchString(a) {
		t.Errorf("newRunTag() = %q, want fence- and 16 hex digits", a)
	}
	if a == b {
		t.Errorf("newRunTag() = %q twice, want a tag per run", a)
	}
}

func TestLogPredicate(t *testing.T) {
	const tag = "fence-0123456789abcdef"
	if got, want := logPredicate(tag), `eventMessage CONTAINS "fence-0123456789abcdef:"`; got != want {
		t.Errorf("logPredicate(%q) = %q, want %q", tag, got, want)
	}
	argv := logStreamArgs(tag)
	if argv[0] != "/usr/bin/log" || argv[len(argv)-1] != logPredicate(tag) {
		t.Errorf("logStreamArgs(%q) = %q, want /usr/bin/log ... with the predicate last", tag, argv)
	}
}

func TestDenial(t *testing.T) {
	const tag = "fence-0123456789abcdef"
	tests := []struct {
		line string
		want string // "" for a line not printed
	}{
		{
			`2026-12-01 17:00:00.123 E  kernel[0:1a2b] (Sandbox) Sandbox: cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519 fence-0123456789abcdef:filesystem.denyRead`,
			"cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519 (rule filesystem.denyRead)",
		},
		{
			`2026-12-01 17:00:00.124 E  kernel[0:1a2b] (Sandbox) Sandbox: sh(4243) deny(1) file-write-create /etc/x "fence-0123456789abcdef:default"`,
			"sh(4243) deny(1) file-write-create /etc/x (rule default)",
		},
		{`no report prefix fence-0123456789abcdef:network`, ""},
		{`Filtering the log data using "eventMessage CONTAINS \"fence-0123456789abcdef:\""`, ""},
		{`fence-0123456789abcdef:filesystem.denyRead Sandbox: cat(1) deny(1) file-read-data /x`, ""},
		{`2026-12-01 17:00:00.125 E  kernel[0:1a2b] (Sandbox) Sandbox: cat(99) deny(1) file-read-data /x fence-ffffffffffffffff:filesystem.denyRead`, ""},
		{`2026-12-01 17:00:00.126 E  kernel[0:1a2b] (Sandbox) Sandbox: cat(99) deny(1) file-read-data /x fence:filesystem.denyRead`, ""},
		{`Timestamp               Ty Process[PID:TID]`, ""},
		{ // a name the command chose, with a terminal's escapes
			"2026-12-01 17:00:00.127 E  kernel[0:1a2b] (Sandbox) Sandbox: cat(7) deny(1) file-read-data /w/\x1b]0;owned\x07\rx fence-0123456789abcdef:filesystem.denyRead\x1b[2J",
			`cat(7) deny(1) file-read-data /w/\x1b]0;owned\a\rx (rule filesystem.denyRead\x1b[2J)`,
		},
	}
	for _, tt := range tests {
		got, ok := denial(tt.line, tag)
		if want := tt.want != ""; ok != want || got != tt.want {
			t.Errorf("denial(%q) = %q, %v; want %q, %v", tt.line, got, ok, tt.want, want)
		}
	}
}

// TestProfileForRun: the run's profile carries the run's tag in every
// message, and a plan the profile cannot enforce exactly is refused,
// not run under a profile that denies everything.
func TestProfileForRun(t *testing.T) {
	const tag = "fence-0123456789abcdef"
	o := testOptions
	o.Tag = tag
	plan := func(c policy.Config) *sandbox.Plan {
		t.Helper()
		p, err := sandbox.NewPlan(policy.Compile(c, testEnv), sandbox.Options{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	profile, _, err := ProfileFor(plan(policy.Config{Filesystem: policy.Filesystem{DenyRead: []string{"~/.aws"}}}), o)
	if err != nil {
		t.Fatalf("ProfileFor = %v, want a profile", err)
	}
	messages := regexp.MustCompile(`\(with message "([^"]*)"`).FindAllStringSubmatch(profile, -1)
	if len(messages) < 2 {
		t.Fatalf("ProfileFor: %d messages, want the default's and the deny's:\n%s", len(messages), profile)
	}
	for _, m := range messages {
		if !strings.HasPrefix(m[1], tag+":") {
			t.Errorf("ProfileFor: message %q lacks the run's tag", m[1])
		}
	}
	if !strings.Contains(profile, tag+":filesystem.denyRead") {
		t.Errorf("ProfileFor: no message names filesystem.denyRead with the tag:\n%s", profile)
	}
	if _, _, err := ProfileFor(plan(policy.Config{Filesystem: policy.Filesystem{DenyRead: []string{"build/a?c"}}}), o); err == nil || !strings.Contains(err.Error(), `filesystem.denyRead "build/a?c"`) {
		t.Errorf("ProfileFor of an inexact deny = %v, want its refusal", err)
	}
	if _, _, err := ProfileFor(plan(policy.Config{Command: policy.Command{RuntimeExecPolicy: "argv"}}), o); err == nil || !strings.Contains(err.Error(), `runtimeExecPolicy "argv"`) {
		t.Errorf("ProfileFor in argv mode = %v, want its refusal", err)
	}
}

func TestLogEnd(t *testing.T) {
	tests := []struct {
		said string
		err  error
		want string
	}{
		{"log: cannot stream\n", errors.New("exit status 64"), `"log: cannot stream"`},
		{"\n  first\nsecond\n", nil, `"first"`},
		{"", errors.New("signal: killed"), "signal: killed"},
		{"", nil, "exit status 0"},
	}
	for _, tt := range tests {
		if got := logEnd(tt.said, tt.err); got != tt.want {
			t.Errorf("logEnd(%q, %v) = %q, want %q", tt.said, tt.err, got, tt.want)
		}
	}
}

// TestPrivateEnv: the command's tmux and module caches go to the private
// TMPDIR, unless its environment names a cache of its own.
func TestPrivateEnv(t *testing.T) {
	got := privateEnv("/private/var/folders/x/fence-1", []string{"SWIFTPM_MODULECACHE_OVERRIDE=/w/.build/mc"})
	want := []string{"TMPDIR=/private/var/folders/x/fence-1", "TMUX_TMPDIR=/private/var/folders/x/fence-1", "CLANG_MODULE_CACHE_PATH=/private/var/folders/x/fence-1/clang-module-cache"}
	if !slices.Equal(got, want) {
		t.Errorf("privateEnv = %q, want %q", got, want)
	}
}
