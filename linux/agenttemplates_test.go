//go:build linux

package linux_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// agentCase is one builtin template for running an agent under fence,
// with the files a fake agent of that kind writes, relative to the world's
// base: state it may write, and settings it must not.
type agentCase struct {
	template string
	planted  map[string]string // files the agent left on the host before
	state    []string          // written by the fake agent: allowed
	config   []string          // written by the fake agent: refused by mandatory.agentHooks
	other    []string          // written by the fake agent: refused, nothing names them
	key      string            // the agent's API key variable
	notKey   string            // another agent's key, which stays out
	warning  string            // what every run says, "" for nothing
}

var agentCases = []agentCase{
	{
		template: "claude-code",
		planted: map[string]string{
			"home/.claude.json":             `{"numStartups": 1}` + "\n",
			"home/.claude/history.jsonl":    "",
			"home/.claude/settings.json":    "{}\n",
			"home/.claude/hooks/pre.sh":     "#!/bin/sh\n",
			"home/.claude/CLAUDE.md":        "# mine\n",
			"ws/.claude/settings.json":      "{}\n",
			"ws/.mcp.json":                  "{}\n",
			"home/.local/share/claude/x/cc": "#!/bin/sh\n",
		},
		state: []string{"home/.claude/projects/ws/s.jsonl", "home/.claude/todos/t.json", "home/.claude/history.jsonl", "home/.claude.json",
			"home/.local/state/claude/locks/l", "home/.cache/claude-cli-nodejs/log"},
		config: []string{"home/.claude/settings.json", "home/.claude/settings.local.json", "home/.claude/hooks/pre.sh", "home/.claude/CLAUDE.md",
			"home/.claude/commands/c.md", "home/.claude/plugins/p.json", "home/.claude/shell-snapshots/snapshot-bash-1.sh", "ws/.claude/settings.json", "ws/.mcp.json"},
		other:   []string{"home/.claude/new.sh", "home/.local/share/claude/x/cc", "home/.claude.json.tmp.1"},
		key:     "ANTHROPIC_API_KEY",
		notKey:  "OPENAI_API_KEY",
		warning: `fence: warning: .*~/\.claude\.json.*MCP server`,
	},
	{
		template: "codex",
		planted: map[string]string{
			"home/.codex/config.toml":  "model = \"x\"\n",
			"home/.codex/auth.json":    "{}\n",
			"home/.codex/rules/r":      "",
			"ws/.codex/config.toml":    "",
			"home/.claude/projects/.k": "",
		},
		state:  []string{"home/.codex/sessions/2026/r.jsonl", "home/.codex/log/codex-tui.log", "home/.codex/auth.json", "ws/AGENTS.md"},
		config: []string{"home/.codex/config.toml", "home/.codex/hooks.json", "home/.codex/AGENTS.md", "home/.codex/rules/r", "home/.codex/prompts/p.md", "home/.codex/packages/standalone/codex", "ws/.codex/config.toml", "home/.claude/projects/x"},
		other:  []string{"home/.codex/new.sh"},
		key:    "OPENAI_API_KEY",
		notKey: "ANTHROPIC_API_KEY",
	},
}

// fakeAgentScript writes each path (relative to base) the way an agent
// appends its state, and prints, for each, "wrote P" or "refused P", then
// which credentials it sees.
func fakeAgentScript(base string, paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		full := filepath.Join(base, p)
		fmt.Fprintf(&b, "if { mkdir -p %q && echo '{\"x\": 1}' >> %q; } 2>/dev/null; then echo 'wrote %s'; else echo 'refused %s'; fi\n", filepath.Dir(full), full, p, p)
	}
	b.WriteString(`for v in ANTHROPIC_API_KEY OPENAI_API_KEY GITHUB_TOKEN AWS_SECRET_ACCESS_KEY; do eval "x=\${$v:-}"; [ -n "$x" ] && echo "sees $v=$x"; done; true` + "\n")
	return b.String()
}

// TestAgentTemplatesFakeAgent runs a fake agent under `fence -t
// claude-code` and `fence -t codex`, as root and as an unprivileged uid:
// it writes its state (allowed, its directories made on a fresh home),
// fails to write its settings, hooks and the project's agent config
// (refused; fence check names mandatory.agentHooks), and sees its own
// key and none of the other credentials.
func TestAgentTemplatesFakeAgent(t *testing.T) {
	for _, ac := range agentCases {
		for _, u := range users(t) {
			t.Run(ac.template+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, u.uid, `{}`)
				w.plant(t, ac.planted)
				var all []string
				all = append(append(append(all, ac.state...), ac.config...), ac.other...)
				env := []string{ac.key + "=sk-own", ac.notKey + "=sk-other", "GITHUB_TOKEN=ghp-x", "AWS_SECRET_ACCESS_KEY=aws-x"}
				r := w.runIn(t, w.ws, env, filepath.Join(bin, "fence"), "-t", ac.template, "-c", fakeAgentScript(w.base, all))
				if r.code != 0 {
					t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
				for _, p := range ac.state {
					if !strings.Contains(r.stdout, "wrote "+p+"\n") {
						t.Errorf("the agent could not write its state %s:\n%s", p, r.stdout)
					}
					b, err := os.ReadFile(filepath.Join(w.base, p))
					switch {
					case p == "home/.claude.json":
						// Left not JSON: fence puts back all it held
						// before the run (see TestClaudeJSONGuard).
						if err != nil || string(b) != ac.planted[p] || !strings.Contains(r.stderr, "restored ~/.claude.json whole") {
							t.Errorf("%s on the host = %q, %v; want it restored\n%s", p, b, err, r.stderr)
						}
					case err != nil || !strings.HasSuffix(string(b), "{\"x\": 1}\n"):
						t.Errorf("%s on the host = %q, %v", p, b, err)
					}
				}
				for _, p := range append(append([]string{}, ac.config...), ac.other...) {
					if !strings.Contains(r.stdout, "refused "+p+"\n") {
						t.Errorf("the agent wrote %s:\n%s", p, r.stdout)
					}
					if b, err := os.ReadFile(filepath.Join(w.base, p)); err == nil && string(b) != ac.planted[p] {
						t.Errorf("%s on the host changed to %q", p, b)
					}
				}
				var sees []string
				for _, l := range strings.Split(r.stdout, "\n") {
					if strings.HasPrefix(l, "sees ") {
						sees = append(sees, l)
					}
				}
				if want := "sees " + ac.key + "=sk-own"; len(sees) != 1 || sees[0] != want {
					t.Errorf("the agent sees %q, want only %q", sees, want)
				}
				if ac.warning != "" && !regexp.MustCompile(ac.warning).MatchString(r.stderr) {
					t.Errorf("the run does not warn %q:\n%s", ac.warning, r.stderr)
				} else if ac.warning == "" && strings.Contains(r.stderr, "warning") {
					t.Errorf("the run warns:\n%s", r.stderr)
				}
				for i, d := range agentChecks(t, w, ac.template, append(ac.config, ac.other...)) {
					p := append(ac.config, ac.other...)[i]
					want := "filesystem.allowWrite"
					if i < len(ac.config) {
						want = "mandatory.agentHooks"
					}
					if d.Allowed || d.Rule != want {
						t.Errorf("fence check write %s: allowed %v by %s, want refused by %s", p, d.Allowed, d.Rule, want)
					}
				}
			})
		}
	}
}

// agentChecks asks `fence -t template check` about writing each path
// below w.base, as w's user.
func agentChecks(t *testing.T, w *world, template string, paths []string) []checkDecision {
	t.Helper()
	var q []string
	for _, p := range paths {
		q = append(q, fmt.Sprintf(`{"access":"write","path":%q}`, filepath.Join(w.base, p)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.commandIn(ctx, w.ws, nil, filepath.Join(bin, "fence"), "-t", template, "check", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(q, "\n"))
	r := runResult(t, cmd)
	var ds []checkDecision
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var d checkDecision
		must(t, dec.Decode(&d))
		ds = append(ds, d)
	}
	if len(ds) != len(paths) {
		t.Fatalf("fence check answered %d of %d queries (exit %d):\n%s", len(ds), len(paths), r.code, r.stderr)
	}
	return ds
}

// TestAgentTemplatesReachAPI: under each template the agent reaches its
// API host through fence's proxy, and a host the template does not name
// is refused with the rule. A hosts file that only fence's mount
// namespace sees points every name at a server on the host's loopback,
// which the test's policy (the template and that one local port) lets
// the proxy dial: no traffic leaves loopback. Root only, for the mount
// namespace; the run itself is as root and as an unprivileged uid.
func TestAgentTemplatesReachAPI(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give fence its own /etc/hosts in a mount namespace")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api "+r.Host) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	hosts := filepath.Join(t.TempDir(), "hosts")
	must(t, os.WriteFile(hosts, []byte("127.0.0.1 api.anthropic.com claude.ai api.openai.com chatgpt.com sentry.io statsig.anthropic.com example.org\n"), 0o644))
	for template, want := range map[string]map[string]string{
		"claude-code": {"api.anthropic.com": "200", "claude.ai": "200", "sentry.io": "403", "statsig.anthropic.com": "403", "chatgpt.com": "403", "example.org": "403"},
		"codex":       {"api.openai.com": "200", "chatgpt.com": "200", "claude.ai": "403", "example.org": "403"},
	} {
		for _, u := range users(t) {
			t.Run(template+"/"+u.name, func(t *testing.T) {
				w := newWorld(t, u.uid, fmt.Sprintf(`{"extends": %q, "network": {"allowLocalOutbound": true, "allowLocalOutboundPorts": [%s]}}`, template, port))
				var script strings.Builder
				for host := range want {
					fmt.Fprintf(&script, "echo %s $(./netprobe http http://%s:%s/v1/messages)\n", host, host, port)
				}
				argv := append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`, hosts},
					w.asUser(filepath.Join(bin, "fence"), "-s", w.settings, "-c", script.String())...)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = w.ws, []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
				r := runResult(t, cmd)
				for host, code := range want {
					line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(host) + ` (.*)$`).FindStringSubmatch(r.stdout)
					switch {
					case line == nil:
						t.Errorf("%s: no answer\n%s\n%s", host, r.stdout, r.stderr)
					case code == "200" && line[1] != "200 | api "+host+":"+port:
						t.Errorf("%s: %q, want the API server's answer", host, line[1])
					case code == "403" && !strings.HasPrefix(line[1], "403 not in network.allowedDomains"):
						t.Errorf("%s: %q, want refused by network.allowedDomains", host, line[1])
					}
				}
			})
		}
	}
}

// TestAgentTemplateWithHook: Claude Code under `fence -t claude-code`
// whose hook wraps its shell calls. The hook, run inside the agent's
// sandbox, still refuses what the command policy refuses and rewrites
// the rest to a fence nested in the agent's: the nested command is held
// by both policies (the hook's denies what the template allows: a file,
// the agent's state, the agent's own key), while the agent itself keeps
// writing its state.
func TestAgentTemplateWithHook(t *testing.T) {
	policy := `{"extends": "code", "filesystem": {"denyRead": ["secret.txt"]}}`
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, policy)
			w.plant(t, map[string]string{"home/.claude.json": "{}\n", "home/.claude/settings.json": "{}\n"})
			fence := filepath.Join(bin, "fence")
			agent := func(stdin, script string) result {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := w.commandIn(ctx, w.ws, []string{"ANTHROPIC_API_KEY=sk-own", "GITHUB_TOKEN=ghp-x"}, fence, "-t", "claude-code", "-c", script)
				cmd.Stdin = strings.NewReader(stdin)
				return runResult(t, cmd)
			}
			event := func(command string) string {
				b, err := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": w.ws, "tool_name": "Bash", "tool_input": map[string]any{"command": command}})
				must(t, err)
				return string(b)
			}
			hook := fmt.Sprintf("%s -s %s hook claude", fence, w.settings)
			if r := agent(event("git push"), hook); r.code != 0 || !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
				t.Fatalf("git push, asked inside the agent's sandbox: exit %d, %q, %s", r.code, r.stdout, r.stderr)
			}
			r := agent(event(`cat secret.txt; cat README; echo $ANTHROPIC_API_KEY $GITHUB_TOKEN; echo x > ~/.claude/projects/p || echo refused-state; echo y > ~/.claude/settings.json || echo refused-settings`), hook)
			var ans hookAnswer
			if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || r.code != 0 {
				t.Fatalf("the hook inside the agent's sandbox: exit %d, %q, %s", r.code, r.stdout, r.stderr)
			}
			command, _ := ans.HookSpecificOutput.UpdatedInput["command"].(string)
			if !strings.HasPrefix(command, fence+" ") {
				t.Fatalf("the hook rewrote the call to %q", command)
			}
			run := agent("", command+"; echo agent > ~/.claude/projects/a && echo agent-wrote-state")
			for _, want := range []string{"readme", "refused-state", "refused-settings", "agent-wrote-state"} {
				if !strings.Contains(run.stdout, want) {
					t.Errorf("the nested run does not print %q:\n%s\n%s", want, run.stdout, run.stderr)
				}
			}
			if strings.Contains(run.stdout, "TOPSECRET") || strings.Contains(run.stdout, "ghp-x") || strings.Contains(run.stdout, "sk-own") || !strings.Contains(run.stderr, "inside a fence sandbox") {
				t.Errorf("the nested run read the hook's denied file, saw a credential, or did not nest:\n%s\n%s", run.stdout, run.stderr)
			}
			if b, _ := os.ReadFile(w.home + "/.claude/projects/a"); string(b) != "agent\n" {
				t.Errorf("the agent's state = %q", b)
			}
			if b, _ := os.ReadFile(w.home + "/.claude/settings.json"); string(b) != "{}\n" {
				t.Errorf("settings.json changed to %q", b)
			}
		})
	}
}
