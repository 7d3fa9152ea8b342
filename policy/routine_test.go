package policy

import (
	"os"
	"strings"
	"testing"
)

// routineEnv is a user whose home the policy makes writable, working in a
// subdirectory of a repository, with a fence binary under the home.
var routineEnv = Env{
	Dir: "/h/src/repo/app", Root: "/h/src/repo", Home: "/h", UserConfigDir: "/h/.config/fence",
	PathDirs:    []string{"/h/go/bin", "/usr/bin", "/h/src/repo/node_modules/.bin", "/h/tools"},
	FenceBinary: "/h/opt/fence/fence",
}

// TestRoutineFiles checks a sample of every group: each path is denied by
// its group's rule, and what is near them stays writable.
func TestRoutineFiles(t *testing.T) {
	p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"~", "~/tools"}}}, routineEnv)
	tests := []struct {
		path    string
		allowed bool
		rule    string
	}{
		{"/h/.bashrc", false, "mandatory.shellStartup"},
		{"/h/.bash_aliases", false, "mandatory.shellStartup"},
		{"/h/.zlogout", false, "mandatory.shellStartup"},
		{"/h/.bashrc.d/50-x.sh", false, "mandatory.shellStartup"},
		{"/h/.config/fish/conf.d/x.fish", false, "mandatory.shellStartup"},
		{"/h/src/repo/.profile", false, "mandatory.shellStartup"},
		{"/h/.gitconfig", false, "mandatory.gitUserConfig"},
		{"/h/.config/git/config", false, "mandatory.gitUserConfig"},
		{"/h/.config/git/attributes", false, "mandatory.gitUserConfig"},
		{"/h/src/repo/app/.claude/settings.json", false, "mandatory.agentHooks"},
		{"/h/src/repo/.claude/settings.local.json", false, "mandatory.agentHooks"},
		{"/h/src/repo/.claude/hooks/x.sh", false, "mandatory.agentHooks"},
		{"/h/.claude/settings.json", false, "mandatory.agentHooks"},
		{"/h/.claude.json", false, "mandatory.agentHooks"},
		{"/h/.codex/config.toml", false, "mandatory.agentHooks"},
		{"/h/src/repo/.codex/hooks.json", false, "mandatory.agentHooks"},
		{"/h/src/repo/app/.cursor/hooks.json", false, "mandatory.agentHooks"},
		{"/h/.gemini/settings.json", false, "mandatory.agentHooks"},
		{"/h/src/repo/.github/hooks/h.json", false, "mandatory.agentHooks"},
		{"/h/.config/opencode/plugins/p.ts", false, "mandatory.agentHooks"},
		{"/h/src/repo/.vscode/tasks.json", false, "mandatory.editor"},
		{"/h/src/repo/app/.nvim.lua", false, "mandatory.editor"},
		{"/h/.vimrc", false, "mandatory.editor"},
		{"/h/.config/nvim/init.lua", false, "mandatory.editor"},
		{"/h/src/repo/.envrc", false, "mandatory.direnv"},
		{"/h/src/repo/app/mise.toml", false, "mandatory.direnv"},
		{"/h/.local/share/direnv/allow/abc", false, "mandatory.direnv"},
		{"/h/.config/direnv/direnvrc", false, "mandatory.direnv"},
		{"/h/.ssh/rc", false, "mandatory.ssh"},
		{"/h/.ssh/authorized_keys", false, "mandatory.ssh"},
		{"/h/.ssh/config", false, "mandatory.ssh"},
		{"/h/.config/systemd/user/evil.service", false, "mandatory.userServices"},
		{"/h/.config/autostart/evil.desktop", false, "mandatory.userServices"},
		{"/h/.npmrc", false, "mandatory.toolchainConfig"},
		{"/h/.config/go/env", false, "mandatory.toolchainConfig"},
		{"/h/.local/lib/python3.12/site-packages/evil.pth", false, "mandatory.toolchainConfig"},
		{"/h/.cargo/env", false, "mandatory.shellStartup"},
		{"/h/.tmux.conf", false, "mandatory.shellStartup"},
		{"/h/.config/tmux/tmux.conf", false, "mandatory.shellStartup"},
		{"/h/.config/starship.toml", false, "mandatory.shellStartup"},
		{"/h/.lesskey", false, "mandatory.shellStartup"},
		{"/h/.local/share/bash-completion/completions/git", false, "mandatory.shellStartup"},
		{"/h/.local/share/fish/vendor_conf.d/x.fish", false, "mandatory.shellStartup"},
		{"/h/.local/share/nvim/lazy/plugin/init.lua", false, "mandatory.editor"},
		{"/h/.local/state/mise/trusted-configs/x", false, "mandatory.direnv"},
		{"/h/.local/share/systemd/user/evil.service", false, "mandatory.userServices"},
		{"/h/.config/systemd/user.conf", false, "mandatory.userServices"},
		{"/h/.local/share/applications/evil.desktop", false, "mandatory.userServices"},
		{"/h/.local/share/dbus-1/services/org.x.service", false, "mandatory.userServices"},
		{"/h/.config/mimeapps.list", false, "mandatory.userServices"},
		{"/h/.config/i3/config", false, "mandatory.userServices"},
		{"/h/.config/sway/config", false, "mandatory.userServices"},
		{"/h/.config/hypr/hyprland.conf", false, "mandatory.userServices"},
		{"/h/.aws/config", false, "mandatory.toolchainConfig"},
		{"/h/.kube/config", false, "mandatory.toolchainConfig"},
		{"/h/.docker/config.json", false, "mandatory.toolchainConfig"},
		{"/h/.docker/cli-plugins/docker-compose", false, "mandatory.toolchainConfig"},
		{"/h/.yarnrc.yml", false, "mandatory.toolchainConfig"},
		{"/h/.bunfig.toml", false, "mandatory.toolchainConfig"},
		{"/h/.mavenrc", false, "mandatory.toolchainConfig"},
		{"/h/.m2/settings.xml", false, "mandatory.toolchainConfig"},
		{"/h/.gradle/gradle.properties", false, "mandatory.toolchainConfig"},
		{"/h/.terraformrc", false, "mandatory.toolchainConfig"},
		{"/h/.hgrc", false, "mandatory.toolchainConfig"},
		{"/h/.condarc", false, "mandatory.toolchainConfig"},
		{"/h/.config/gh/config.yml", false, "mandatory.toolchainConfig"},
		{"/h/.config/uv/uv.toml", false, "mandatory.toolchainConfig"},
		{"/h/.local/share/gh/extensions/gh-x/gh-x", false, "mandatory.toolchainConfig"},
		{"/h/.ipython/profile_default/startup/00.py", false, "mandatory.replStartup"},
		{"/h/.pythonrc", false, "mandatory.replStartup"},
		{"/h/.gdbinit", false, "mandatory.replStartup"},
		{"/h/.psqlrc", false, "mandatory.replStartup"},
		{"/h/.Rprofile", false, "mandatory.replStartup"},
		{"/h/src/repo/app/.Rprofile", false, "mandatory.replStartup"},
		{"/h/.irbrc", false, "mandatory.replStartup"},
		{"/h/.pryrc", false, "mandatory.replStartup"},
		// What lies next to them stays the policy's.
		{"/h/notes.txt", true, "filesystem.allowWrite"},
		{"/h/.ssh/known_hosts", true, "filesystem.allowWrite"},
		{"/h/.config/other/x", true, "filesystem.allowWrite"},
		{"/h/src/repo/app/main.go", true, "filesystem.allowWrite"},
		{"/h/src/repo/app/.envrc.example", true, "filesystem.allowWrite"},
		{"/h/src/repo/app/mise/notes", true, "filesystem.allowWrite"},
		{"/h/.local/lib/node/x", true, "filesystem.allowWrite"},
		{"/h/.aws/sso/cache/x.json", true, "filesystem.allowWrite"},
		{"/h/.docker/buildx/x", true, "filesystem.allowWrite"},
		{"/h/.m2/repository/x.jar", true, "filesystem.allowWrite"},
		{"/h/.gradle/caches/x", true, "filesystem.allowWrite"},
		{"/h/.local/share/fish/fish_history", true, "filesystem.allowWrite"},
		{"/h/.cargo/registry/x", true, "filesystem.allowWrite"},
		// Only the workspace and the directories above it up to its root.
		{"/h/src/other/.envrc", true, "filesystem.allowWrite"},
	}
	for _, tt := range tests {
		if d := p.CheckPath("write", tt.path, tt.path); d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("CheckPath(write, %s) = %v %s, want %v %s", tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
	}
}

// TestPathDirProtection: a PATH directory is writable only when an
// allowWrite rule names it itself, not through a parent.
func TestPathDirProtection(t *testing.T) {
	tests := []struct {
		name, path string
		write      []string
		allowed    bool
		rule       string
	}{
		{"through home", "/h/go/bin/ls", []string{"~"}, false, "mandatory.pathDir"},
		{"through the workspace", "/h/src/repo/node_modules/.bin/tsc", []string{"/h/src/repo"}, false, "mandatory.pathDir"},
		{"through a glob", "/h/go/bin/ls", []string{"~/**"}, false, "mandatory.pathDir"},
		{"through /", "/usr/bin/ls", []string{"/"}, false, "mandatory.pathDir"},
		{"stock ~/.local/bin, not on PATH", "/h/.local/bin/ls", []string{"~"}, false, "mandatory.pathDir"},
		{"stock ~/bin, not on PATH", "/h/bin/ls", []string{"~"}, false, "mandatory.pathDir"},
		{"~/.cargo/bin, not on PATH", "/h/.cargo/bin/cargo", []string{"~"}, false, "mandatory.pathDir"},
		{"~/.deno/bin, not on PATH", "/h/.deno/bin/deno", []string{"~"}, false, "mandatory.pathDir"},
		{"~/.cargo/bin named itself", "/h/.cargo/bin/cargo", []string{"~", "~/.cargo/bin"}, true, "filesystem.allowWrite"},
		{"named itself", "/h/go/bin/ls", []string{"~", "~/go/bin"}, true, "filesystem.allowWrite"},
		{"named itself, trailing slash", "/h/.local/bin/ls", []string{"~", "~/.local/bin/"}, true, "filesystem.allowWrite"},
		{"named itself, alone", "/h/tools/x", []string{"~/tools"}, true, "filesystem.allowWrite"},
		{"a child named is not the directory", "/h/go/bin/ls", []string{"~", "~/go/bin/ls"}, false, "mandatory.pathDir"},
		{"not writable at all", "/usr/bin/ls", []string{"~"}, false, "filesystem.allowWrite"},
		{"next to a PATH directory", "/h/go/pkg/x", []string{"~"}, true, "filesystem.allowWrite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compile(Config{Filesystem: Filesystem{AllowWrite: tt.write}}, routineEnv)
			d := p.CheckPath("write", tt.path, tt.path)
			if d.Allowed != tt.allowed || d.Rule != tt.rule {
				t.Errorf("CheckPath(write, %s) = %v %s, want %v %s", tt.path, d.Allowed, d.Rule, tt.allowed, tt.rule)
			}
			if d.Rule == "mandatory.pathDir" && !strings.Contains(d.Suggestion, "filesystem.allowWrite") {
				t.Errorf("suggestion %q does not say how to make the directory writable", d.Suggestion)
			}
		})
	}
}

func TestFenceBinaryProtection(t *testing.T) {
	env := routineEnv
	env.FenceInvoked = "/h/src/repo/app/tools/fence" // a link to /h/opt/fence/fence
	tests := []struct {
		name, binary, invoked, path, rule string
	}{
		{"binary", "/h/opt/fence/fence", "", "/h/opt/fence/fence", "mandatory.fenceBinary"},
		{"binary's directory", "/h/opt/fence/fence", "", "/h/opt/fence/fence.new", "mandatory.fenceBinary"},
		{"below the binary's directory", "/h/opt/fence/fence", "", "/h/opt/fence/lib/x", "mandatory.fenceBinary"},
		{"next to the binary's directory", "/h/opt/fence/fence", "", "/h/opt/other/x", "filesystem.allowWrite"},
		{"a prefix of the directory's name", "/h/opt/fence/fence", "", "/h/opt/fence-other/fence", "filesystem.allowWrite"},
		{"no binary known", "", "", "/h/opt/fence/fence", "filesystem.allowWrite"},
		{"the link run", "/h/opt/fence/fence", "/h/src/repo/app/tools/fence", "/h/src/repo/app/tools/fence", "mandatory.fenceBinary"},
		{"the link's directory", "/h/opt/fence/fence", "/h/src/repo/app/tools/fence", "/h/src/repo/app/tools/fence.new", "mandatory.fenceBinary"},
		{"the binary, run through a link", "/h/opt/fence/fence", "/h/src/repo/app/tools/fence", "/h/opt/fence/x", "mandatory.fenceBinary"},
		{"next to the link's directory", "/h/opt/fence/fence", "/h/src/repo/app/tools/fence", "/h/src/repo/app/main.go", "filesystem.allowWrite"},
		{"run as itself", "/h/opt/fence/fence", "/h/opt/fence/fence", "/h/src/repo/app/tools/fence", "filesystem.allowWrite"},
		{"only the invoked path known", "", "/h/src/repo/app/tools/fence", "/h/src/repo/app/tools/x", "mandatory.fenceBinary"},
		{"relative invoked path ignored", "/h/opt/fence/fence", "tools/fence", "/h/src/repo/app/tools/x", "filesystem.allowWrite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := routineEnv
			env.FenceBinary, env.FenceInvoked = tt.binary, tt.invoked
			p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"~"}}}, env)
			if d := p.CheckPath("write", tt.path, tt.path); d.Rule != tt.rule || d.Allowed != (tt.rule == "filesystem.allowWrite") {
				t.Errorf("CheckPath(write, %s) = %v %s, want %s", tt.path, d.Allowed, d.Rule, tt.rule)
			}
		})
	}
}

// TestRoutineConfigHome: with XDG_CONFIG_HOME, XDG_DATA_HOME and
// XDG_STATE_HOME elsewhere, both they and the defaults below the home are
// covered (tools differ on which they read).
func TestRoutineConfigHome(t *testing.T) {
	env := routineEnv
	env.UserConfigDir, env.DataHome, env.StateHome = "/x/cfg/fence", "/x/data/", "/x/state"
	p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"~", "/x"}}}, env)
	tests := []struct{ path, rule string }{
		{"/x/cfg/git/config", "mandatory.gitUserConfig"},
		{"/h/.config/git/config", "mandatory.gitUserConfig"},
		{"/x/cfg/systemd/user/a.service", "mandatory.userServices"},
		{"/x/cfg/tmux/tmux.conf", "mandatory.shellStartup"},
		{"/x/cfg/gh/config.yml", "mandatory.toolchainConfig"},
		{"/x/data/systemd/user/a.service", "mandatory.userServices"},
		{"/h/.local/share/systemd/user/a.service", "mandatory.userServices"},
		{"/x/data/direnv/allow/abc", "mandatory.direnv"},
		{"/h/.local/share/direnv/allow/abc", "mandatory.direnv"},
		{"/x/data/applications/evil.desktop", "mandatory.userServices"},
		{"/x/data/bash-completion/completions/git", "mandatory.shellStartup"},
		{"/x/state/mise/trusted-configs/x", "mandatory.direnv"},
		{"/h/.local/state/mise/trusted-configs/x", "mandatory.direnv"},
		{"/x/data/other/x", "filesystem.allowWrite"},
	}
	for _, tt := range tests {
		if d := p.CheckPath("write", tt.path, tt.path); d.Rule != tt.rule || d.Allowed != (tt.rule == "filesystem.allowWrite") {
			t.Errorf("CheckPath(write, %s) = %v %s, want %s", tt.path, d.Allowed, d.Rule, tt.rule)
		}
	}
	// A relative XDG_DATA_HOME is ignored, as the XDG spec says.
	env.DataHome = "data"
	if d := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"/h/src/repo/app"}}}, env).CheckPath("write", "/h/src/repo/app/data/direnv/x", "/h/src/repo/app/data/direnv/x"); !d.Allowed {
		t.Errorf("relative XDG_DATA_HOME protected: %+v", d)
	}
}

func TestPathDirs(t *testing.T) {
	got := strings.Join(PathDirs("/usr/local/bin:/usr/bin/:bin::.:/usr/bin:/h/go/../go/bin"), " ")
	if want := "/usr/local/bin /usr/bin /h/go/bin"; got != want {
		t.Errorf("PathDirs = %q, want %q", got, want)
	}
}

// TestRoutineGroupsDocumented keeps the list and README's table together.
func TestRoutineGroupsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"mandatory.pathDir", "mandatory.fenceBinary"}
	for _, g := range routineGroups {
		if !strings.HasPrefix(g.Key, "mandatory.") || g.Why == "" {
			t.Errorf("group %q: want a mandatory.* key and a reason", g.Key)
		}
		keys = append(keys, g.Key)
	}
	for _, k := range keys {
		if !strings.Contains(string(readme), "`"+k+"`") {
			t.Errorf("README does not list the group %s", k)
		}
	}
}
