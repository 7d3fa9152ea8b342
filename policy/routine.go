package policy

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// A routineGroup is a set of files and directories that run code, or
// change what later runs, on a routine action: opening a shell, running
// git, starting an agent or an editor, cd-ing into a directory, logging
// in. A sandboxed command that could write one would get its code run
// outside the sandbox, so fence always write-protects them, each group
// under its own rule key. Paths are relative to where they apply: Home
// ($HOME), Config (the XDG config directory, and ~/.config when that
// differs), Data ($XDG_DATA_HOME and ~/.local/share), State
// ($XDG_STATE_HOME and ~/.local/state), Workspace (the working directory
// and each directory above it up to the workspace root), or absolute
// (System).
//
// What is not here on purpose: a project's own build inputs (package.json
// scripts, Makefile, build.rs, .cargo/config.toml, .npmrc in the
// workspace), which the command can change anyway and which run only when
// you build; instruction files (AGENTS.md, CLAUDE.md), which are text for
// a model, not code; and .env, a data file many tools write (direnv reads
// it only with load_dotenv, as variables).
type routineGroup struct {
	Key, Why                                     string
	Home, Config, Data, State, Workspace, System []string
}

// shellStartup are the files a shell reads at start or exit, in $HOME
// and, for a shell started with the workspace as HOME, in the workspace.
var shellStartup = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout",
}

// routineGroups is the list, grouped by why each path runs code.
var routineGroups = []routineGroup{
	{
		Key: "mandatory.shellStartup", Why: "shell startup file: the next shell, prompt or terminal runs it",
		Home: append(append([]string{}, shellStartup...),
			".bash_aliases",              // sourced by Debian's and Ubuntu's stock .bashrc
			".bashrc.d",                  // every file in it is sourced by Fedora's stock .bashrc
			".bash_completion",           // sourced by bash-completion in every interactive bash
			".inputrc",                   // readline: a key binding can type and run a command
			".cargo/env",                 // sourced by ~/.profile and ~/.bashrc as rustup installs it
			".deno/env",                  // sourced by ~/.bashrc as Deno's installer sets it up
			".ghcup/env",                 // sourced by ~/.bashrc as ghcup installs it
			".nvm/nvm.sh",                // sourced by ~/.bashrc as nvm's installer sets it up
			".sdkman/bin/sdkman-init.sh", // sourced by ~/.bashrc as SDKMAN installs it
			".tmux.conf",                 // tmux: run-shell and if-shell lines run when it starts
			".screenrc",                  // GNU screen: exec and screen lines run when it starts
			".lesskey", ".less",          // less: its #env section sets LESSOPEN, a program run on every file less shows (git log, man)
			".wezterm.lua", // WezTerm: Lua run by the terminal
		),
		Config: []string{
			"fish",          // config.fish, conf.d/ and functions/ run in every fish
			"starship.toml", // starship: custom modules run a command at every prompt
			"tmux",          // tmux.conf, as above
			"lesskey",       // less, as above
			"wezterm",       // WezTerm: wezterm.lua
			"kitty",         // kitty: the shell it starts, startup sessions, watchers (Python)
			"alacritty",     // Alacritty: the shell it starts
			"zellij",        // Zellij: layouts and the shell it starts
		},
		Data: []string{
			"bash-completion",                                      // completions bash-completion loads on Tab
			"fish/vendor_conf.d",                                   // run in every fish
			"fish/vendor_functions.d", "fish/vendor_completions.d", // loaded by fish on use
		},
		Workspace: shellStartup,
	},
	{
		Key: "mandatory.gitUserConfig", Why: "git config: names commands git runs (core.fsmonitor, core.hooksPath, aliases, filters)",
		Home:   []string{".gitconfig"},
		Config: []string{"git"}, // config, attributes, ignore, and hooks a hooksPath often points at
		System: []string{"/etc/gitconfig"},
	},
	{
		Key: "mandatory.agentHooks", Why: "coding agent settings: their hooks and MCP servers run outside any sandbox",
		Workspace: []string{
			".claude",         // Claude Code: settings.json and settings.local.json (hooks), hooks/, commands/, agents/, skills/
			".mcp.json",       // Claude Code: the project's MCP servers, each a command
			".codex",          // Codex: config.toml and hooks.json of a trusted project
			".cursor",         // Cursor: hooks.json, mcp.json
			".gemini",         // Gemini CLI: settings.json (hooks, MCP servers, tool discovery command)
			".github/hooks",   // GitHub Copilot CLI and coding agent hooks
			".windsurf",       // Windsurf: hooks.json, mcp_config.json
			".continue",       // Continue: config.yaml and mcpServers/
			".aider.conf.yml", // Aider: lint-cmd and test-cmd run after every edit
			".opencode",       // OpenCode: plugins/ run in the agent
			"opencode.json",   // OpenCode: plugins and MCP commands
			"opencode.jsonc",  // the same, as JSONC
			".clinerules",     // Cline: hooks/ scripts
			".cline",          // Cline: project hooks and plugins
			".kiro",           // Kiro: hooks/ and settings/mcp.json
			".roo",            // Roo Code: mcp.json
			".amazonq",        // Amazon Q Developer: mcp.json
		},
		Home: []string{
			".claude",         // Claude Code: user settings (hooks, statusLine), hooks, commands, agents, plugins
			".claude.json",    // Claude Code: MCP servers, and which projects' settings are trusted
			".codex",          // Codex: config.toml, hooks.json, the trusted projects
			".cursor",         // Cursor: hooks.json, mcp.json
			".gemini",         // Gemini CLI: settings.json, trustedFolders.json
			".copilot",        // GitHub Copilot CLI: config (trusted folders), MCP servers
			".codeium",        // Windsurf: windsurf/mcp_config.json, hooks
			".continue",       // Continue: config.yaml, config.ts (run in the editor)
			".aider.conf.yml", // Aider: lint-cmd, test-cmd
			".cline",          // Cline: hooks/, plugins/, MCP settings
			"Documents/Cline", // Cline: global Hooks/
			".kiro",           // Kiro: hooks/, settings/mcp.json
		},
		Config: []string{
			"opencode", // OpenCode: opencode.json, plugins/
			"goose",    // Goose: config.yaml extensions, each a command
			"amp",      // Amp: settings.json MCP servers
		},
	},
	{
		Key: "mandatory.editor", Why: "editor settings and tasks: run when the editor or the project opens",
		Workspace: []string{
			".vscode",            // tasks.json (runOn folderOpen), settings naming programs, mcp.json
			".idea",              // JetBrains: run configurations, startup tasks
			".zed",               // Zed: settings.json (language servers), tasks.json
			".helix",             // Helix: languages.toml names the language servers it starts
			".nvim.lua",          // Neovim with 'exrc'
			".nvimrc",            // Neovim with 'exrc'
			".exrc",              // Vim and Neovim with 'exrc'
			".dir-locals.el",     // Emacs: eval: local variables
			".devcontainer",      // devcontainer.json: initializeCommand runs on the host
			".devcontainer.json", // the same, at the top
		},
		Home: []string{
			".vimrc", ".vim", ".gvimrc", ".exrc", // Vim
			".emacs", ".emacs.el", ".emacs.d", // Emacs
			".vscode",                          // VS Code: extensions/ run in the editor
			".vscode-server",                   // VS Code remote: the server and its extensions
			"Library/Application Support/Code", // VS Code on macOS: User/settings.json, tasks.json
		},
		Config: []string{
			"nvim", "helix", "zed", "emacs", // their init files and plugins
			"Code", "VSCodium", "Cursor", // User/settings.json, tasks.json, keybindings
			"JetBrains", // IDE options, startup scripts
		},
		Data: []string{
			"nvim", // Neovim: plugins (site/pack, lazy/) loaded at every start
		},
	},
	{
		Key: "mandatory.direnv", Why: "runs on cd into the directory: direnv's .envrc, mise's config (hooks, env, tasks)",
		Workspace: []string{
			".envrc",                                                         // direnv
			"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", // mise
			".mise/config.toml", "mise/config.toml", ".config/mise.toml", // mise, in a config directory
			".config/mise/config.toml", ".config/mise/conf.d",
		},
		Data:  []string{"direnv"}, // direnv's allow list: an entry there approves an .envrc
		State: []string{"mise"},   // mise's trusted configs
		Config: []string{
			"direnv", // direnvrc and lib/*.sh run for every .envrc
			"mise",   // global config: hooks, env, tasks
		},
	},
	{
		Key: "mandatory.ssh", Why: "ssh: rc runs at login, config runs ProxyCommand and LocalCommand, authorized_keys lets a key in",
		Home: []string{
			".ssh/rc", ".ssh/config", ".ssh/config.d", ".ssh/environment",
			".ssh/authorized_keys", ".ssh/authorized_keys2",
		},
	},
	{
		Key: "mandatory.userServices", Why: "user services, autostart and the desktop session: run at login, on a timer, or when a file or link is opened",
		Config: []string{
			"systemd/user",      // systemd user units and timers
			"systemd/user.conf", // the user manager's DefaultEnvironment, LD_PRELOAD included
			"systemd/user.conf.d",
			"autostart",                                         // XDG autostart .desktop files
			"environment.d",                                     // the session's variables, LD_PRELOAD included
			"plasma-workspace/env", "plasma-workspace/shutdown", // KDE Plasma: scripts sourced at login and run at logout

			// Window managers: exec lines and init scripts run at login.
			"i3", "sway", "hypr", "river", "niri", "labwc", "openbox", "awesome", "qtile", "bspwm", "xmonad",

			"sxhkd",                                                          // hotkey daemon: each binding runs a command
			"mimeapps.list",                                                  // which desktop entry opens a file type or URL scheme
			"gnome-mimeapps.list", "kde-mimeapps.list", "xfce-mimeapps.list", // the same, per desktop
			"x-cinnamon-mimeapps.list", "mate-mimeapps.list", "lxqt-mimeapps.list",
		},
		Data: []string{
			"systemd/user",           // systemd user units
			"applications",           // desktop entries: Exec= runs when a file or link is opened with them
			"dbus-1/services",        // D-Bus session services: Exec= runs when a name is first asked for
			"gnome-shell/extensions", // GNOME Shell extensions: JavaScript run in the shell
		},
		Home: []string{
			".xprofile", ".xsession", ".xsessionrc", ".xinitrc", // X session scripts
			".pam_environment", // pam_env: the login's variables
			".i3", ".xmonad",   // i3 and xmonad, in their older places
			".xbindkeysrc",         // xbindkeys: each binding runs a command
			".mailcap",             // the command that opens each MIME type (mutt, w3m, run-mailcap)
			"Library/LaunchAgents", // launchd agents on macOS
		},
	},
	{
		Key: "mandatory.toolchainConfig", Why: "user-wide tool config: names a program the tool runs in every project",
		Home: []string{
			".npmrc", ".yarnrc", // script-shell, node-options; yarn-path
			".yarnrc.yml",                         // Yarn Berry: yarnPath and plugins run with every yarn
			".bunfig.toml",                        // Bun: preload scripts run with every bun
			".cargo/config.toml", ".cargo/config", // rustc-wrapper, runner
			".gradle/init.d", ".gradle/init.gradle", ".gradle/init.gradle.kts", // init scripts run on every build
			".gradle/gradle.properties",        // org.gradle.jvmargs: a -javaagent runs in every build
			".mavenrc",                         // sourced by the mvn script
			".m2/settings.xml",                 // Maven: mirrors and repositories pick the plugins the next build runs
			".m2/extensions.xml",               // Maven 4: core extensions loaded into every build
			".pip",                             // pip.conf: index-url picks what the next install runs
			".local/lib/python*/site-packages", // user site: .pth files and usercustomize run at every Python start
			"Library/Python/*/lib/python/site-packages", // the same on macOS
			".condarc", ".conda/condarc", ".mambarc", // conda: channels pick what the next install runs
			".aws/config",          // AWS CLI and SDKs: credential_process runs a program for credentials
			".aws/cli/alias",       // AWS CLI: an alias starting with ! runs a shell command
			".kube/config",         // kubectl and client-go: users[].exec runs a credential plugin
			".docker/config.json",  // docker: credsStore and credHelpers run docker-credential-*
			".docker/cli-plugins",  // docker: the program behind a subcommand (docker compose, docker buildx)
			".terraformrc",         // Terraform: provider_installation picks the providers it runs
			".terraform.d/plugins", // Terraform: provider binaries run on init and plan
			".hgrc",                // Mercurial: hooks and extensions run on hg commands
		},
		Config: []string{
			"go/env",       // GOFLAGS=-toolexec runs a program for every go build
			"pip",          // pip.conf
			"uv",           // uv.toml: index-url picks what the next install runs
			"pnpm/rc",      // pnpm's user npmrc
			"conda",        // .condarc, as above
			".bunfig.toml", // Bun, as above
			"gh",           // GitHub CLI: an alias with --shell runs a shell command
			"hg",           // Mercurial: hgrc, as above
			"containers",   // Podman: containers.conf names the runtimes and hooks it runs
			"nix",          // nix.conf: post-build-hook runs a program, substituters pick what builds fetch
		},
		Data: []string{
			"gh/extensions", // GitHub CLI: each extension is a program run as gh NAME
		},
	},
	{
		Key: "mandatory.replStartup", Why: "interpreter and debugger startup file: runs in every interactive session",
		Home: []string{
			".pythonrc", ".pythonstartup", ".pythonrc.py", // what PYTHONSTARTUP usually names
			".ipython",              // IPython: profile_default/startup/ and ipython_config.py
			".jupyter",              // Jupyter: jupyter_*_config.py run at every start
			".gdbinit", ".lldbinit", // gdb and lldb: commands run at every start
			".psqlrc", ".psqlrc-*", // psql: \! runs a shell command
			".sqliterc",              // sqlite3: .shell and .system run commands
			".Rprofile", ".Renviron", // R: code and variables at every start
			".irbrc", ".pryrc", // irb and pry: Ruby run at every start
			".ghci", ".ghc/ghci.conf", // GHCi: :! and :def run commands
			".julia/config", // Julia: startup.jl
		},
		Config: []string{
			"gdb", // gdbinit, as above
			"irb", // irbrc, as above
		},
		Workspace: []string{
			".Rprofile", ".Renviron", // R reads the working directory's before the home's
			".pryrc", ".irbrc", // pry and irb read the working directory's too
			".ghci", // GHCi reads the working directory's too
		},
	},
}

// routineRules are the denyWrite rules for every routine group in env,
// given the run's write rules (an agent's home directory that they open
// part by part is protected by its code-running parts: agentProtection).
func routineRules(env Env, exp expander, write []Rule) []Rule {
	var out []Rule
	add := func(p, why, key string) {
		r := exp.rule(p, "always protected: "+why, false)
		r.Key, r.Source = key, "fence (always protected)"
		out = append(out, r)
	}
	for _, g := range routineGroups {
		home := map[string]string{}
		paths := routinePaths(g, env)
		if g.Key == "mandatory.agentHooks" {
			if env.Home != "" {
				for _, rel := range g.Home {
					home[path.Join(env.Home, rel)] = rel
				}
			}
			moved := movedAgentPaths(env.AgentHomes)
			maps.Copy(home, moved)
			paths = append(paths, slices.Sorted(maps.Keys(moved))...)
		}
		for _, p := range paths {
			rel, ok := home[p]
			if !ok {
				add(p, g.Why, g.Key)
				continue
			}
			for _, part := range agentProtection(rel, p, write) {
				add(part, g.Why, g.Key)
			}
		}
	}
	return out
}

// routinePaths are g's paths made absolute for env.
func routinePaths(g routineGroup, env Env) []string {
	var out []string
	join := func(dirs []string, names []string) {
		for _, d := range dirs {
			for _, n := range names {
				out = append(out, path.Join(d, n))
			}
		}
	}
	if env.Home != "" {
		join([]string{env.Home}, g.Home)
	}
	join(configHomes(env), g.Config)
	join(xdgHomes(env.DataHome, env.Home, ".local/share"), g.Data)
	join(xdgHomes(env.StateHome, env.Home, ".local/state"), g.State)
	join(workspaceDirs(env), g.Workspace)
	return append(out, g.System...)
}

// configHomes are the XDG config directory (the parent of fence's own
// user config directory) and ~/.config, once each: tools differ on
// whether they honour XDG_CONFIG_HOME.
func configHomes(env Env) []string {
	var out []string
	if env.UserConfigDir != "" {
		out = append(out, path.Dir(path.Clean(env.UserConfigDir)))
	}
	if env.Home != "" {
		if dot := path.Join(env.Home, ".config"); len(out) == 0 || out[0] != dot {
			out = append(out, dot)
		}
	}
	return out
}

// xdgHomes are an XDG base directory as set (xdg, when absolute) and its
// default below home, once each: tools differ on whether they honour the
// variable.
func xdgHomes(xdg, home, dflt string) []string {
	var out []string
	if strings.HasPrefix(xdg, "/") {
		out = append(out, path.Clean(xdg))
	}
	if home != "" {
		if d := path.Join(home, dflt); len(out) == 0 || out[0] != d {
			out = append(out, d)
		}
	}
	return out
}

// stockPathDirs are put on PATH at login, when they exist, by the stock
// ~/.profile of Debian, Ubuntu and Fedora, or by what a common installer
// adds to the startup files, so they count as PATH directories even when
// this caller's PATH lacks them.
var stockPathDirs = []pathCandidate{
	{"bin", "a directory the stock ~/.profile puts on PATH"},
	{".local/bin", "a directory the stock ~/.profile puts on PATH"},
	{".cargo/bin", "a directory ~/.cargo/env puts on PATH at login"},
	{".deno/bin", "a directory ~/.deno/env puts on PATH at login"},
	{".bun/bin", "a directory Bun's installer puts on PATH in ~/.bashrc"},
}

// PathDirs are the absolute directories of a PATH list, cleaned, in
// order, once each. Relative entries (".", "") are left out: they name no
// directory of their own.
func PathDirs(list string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range strings.Split(list, ":") {
		if !strings.HasPrefix(d, "/") {
			continue
		}
		if d = path.Clean(d); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// pathDirRules protect each PATH directory that a write rule reaches
// only through a parent: a program the command drops there would run
// outside the sandbox the next time its name is typed. A directory an
// allowWrite rule names itself stays writable.
func pathDirRules(env Env, exp expander, write []Rule) []Rule {
	var out []Rule
	for _, d := range pathCandidates(env) {
		if firstCovering(write, d.dir) == nil || namesItself(write, d.dir) {
			continue
		}
		r := exp.rule(d.dir, "always protected: "+d.why+" (name it in filesystem.allowWrite to make it writable)", false)
		r.Key, r.Source = "mandatory.pathDir", "fence (always protected)"
		out = append(out, r)
	}
	return out
}

type pathCandidate struct{ dir, why string }

// pathCandidates are the caller's PATH directories and the stock ones,
// once each.
func pathCandidates(env Env) []pathCandidate {
	var out []pathCandidate
	seen := map[string]bool{}
	add := func(dir, why string) {
		if !seen[dir] {
			seen[dir] = true
			out = append(out, pathCandidate{dir, why})
		}
	}
	for _, d := range env.PathDirs {
		add(path.Clean(d), "a directory on your PATH")
	}
	for _, d := range stockPathDirs {
		if env.Home != "" {
			add(path.Join(env.Home, d.dir), d.why)
		}
	}
	return out
}

// namesItself reports whether a plain write rule is exactly dir.
func namesItself(write []Rule, dir string) bool {
	for _, r := range write {
		if !r.Glob && path.Clean(r.Pattern) == dir {
			return true
		}
	}
	return false
}

// fenceBinaryRules protect the running fence binary and its directory,
// and the path fence was run by and its directory when that differs (a
// link in a writable tree, ./tools/fence): a replaced fence, or a link
// moved to another program, would run every later sandbox.
func fenceBinaryRules(env Env, exp expander) []Rule {
	var out []Rule
	seen := map[string]bool{}
	for _, b := range []struct{ path, why string }{
		{env.FenceBinary, "the fence binary and its directory (a replaced fence would run every later sandbox)"},
		{env.FenceInvoked, "the path fence was run by and its directory (a link there pointed elsewhere would run the next sandbox)"},
	} {
		if !strings.HasPrefix(b.path, "/") || seen[path.Clean(b.path)] {
			continue
		}
		bin := path.Clean(b.path)
		seen[bin] = true
		for _, p := range []string{bin, path.Dir(bin)} {
			r := exp.rule(p, "always protected: "+b.why, false)
			r.Key, r.Source = "mandatory.fenceBinary", "fence (always protected)"
			out = append(out, r)
		}
	}
	return out
}

// pathDirHint says why a writable PATH directory matters.
const pathDirHint = "a program the command puts there runs outside the sandbox the next time its name is typed"
