package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

func TestMatchEnv(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*_TOKEN", "GITHUB_TOKEN", true},
		{"*_TOKEN", "github_token", true},
		{"*_token", "GITHUB_TOKEN", true},
		{"*_TOKEN", "GitHub_Token", true},
		{"*_TOKEN", "TOKENIZERS_PARALLELISM", false},
		{"*_TOKEN", "GITHUB_TOKEN_FILE", false},
		{"PGPASSWORD", "pgpassword", true},
		{"PGPASSWORD", "PGPASSWORDS", false},
		{"*TOKEN", "npm_config_//registry.npmjs.org/:_authToken", true},
		{"npm_config_//*", "NPM_CONFIG_//registry.npmjs.org/:_authToken", true},
		{"AWS_?_KEY", "aws_x_key", true},
		{"[A-Z]_KEY", "x_key", true},
		{"[a-z]_KEY", "X_KEY", true},
		{"[", "[", false},
		{"*", "", true},
	}
	for _, tt := range tests {
		if got := MatchEnv(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchEnv(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestEnvRemoval(t *testing.T) {
	deny := []string{"*_TOKEN", "*SECRET*", "PGPASSWORD"}
	allow := []string{"keep_*", "CI_JOB_TOKEN"}
	tests := []struct {
		name    string
		rule    string
		removed bool
	}{
		{"GH_TOKEN", "*_TOKEN", true},
		{"gh_token", "*_TOKEN", true},
		{"MY_SECRET_TOKEN", "*_TOKEN", true}, // the first pattern that matches
		{"AWS_SECRET_ACCESS_KEY", "*SECRET*", true},
		{"PgPassword", "PGPASSWORD", true},
		{"KEEP_TOKEN", "", false},   // allow beats deny
		{"ci_job_token", "", false}, // allow folds case too
		{"PATH", "", false},
		{"LD_PRELOAD", LoaderRule, true},
		{"DYLD_INSERT_LIBRARIES", LoaderRule, true},
		{"LD_KEEP_TOKEN", LoaderRule, true}, // env.allow does not lift the loader rule
		{"BASH_ENV", ShellStartupRule, true},
		{"ENV", "", false},
		{"LDFLAGS", "", false},
	}
	for _, tt := range tests {
		rule, removed := EnvRemoval(tt.name, deny, allow)
		if rule != tt.rule || removed != tt.removed {
			t.Errorf("EnvRemoval(%q) = %q, %v, want %q, %v", tt.name, rule, removed, tt.rule, tt.removed)
		}
	}
}

func TestSanitizeEnvFoldsCase(t *testing.T) {
	env, removed := SanitizeEnv(
		[]string{"github_token=g", "PGPASSWORD=p", "Keep_Token=k", "FENCE_SANDBOX=0", "TERM=xterm"},
		[]string{"*_TOKEN", "pgpassword", "fence_sandbox"}, []string{"KEEP_*"})
	if want := []string{"Keep_Token=k", "TERM=xterm", "FENCE_SANDBOX=1"}; !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
	if want := []string{"PGPASSWORD", "github_token"}; !slices.Equal(removed, want) {
		t.Errorf("removed = %q, want %q", removed, want)
	}
}

// secretEnvNames are credentials every builtin template keeps from the
// command.
var secretEnvNames = []string{
	// Cloud
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING",
	"AZURE_STORAGE_SAS_TOKEN", "ARM_CLIENT_SECRET", "ARM_ACCESS_KEY", "GOOGLE_API_KEY", "GOOGLE_CREDENTIALS",
	"GOOGLE_CLOUD_KEYFILE_JSON", "GCP_SERVICE_ACCOUNT_CREDENTIALS_JSON", "DIGITALOCEAN_ACCESS_TOKEN", "CLOUDFLARE_API_TOKEN",
	"CLOUDFLARE_API_KEY", "HEROKU_API_KEY", "FLY_API_TOKEN", "VERCEL_TOKEN", "NETLIFY_AUTH_TOKEN", "MINIO_SECRET_KEY",
	"SCW_SECRET_KEY", "B2_APPLICATION_KEY", "SUPABASE_SERVICE_ROLE_KEY",
	// Git hosting, CI and registries
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_PAT", "GH_PAT", "GITLAB_TOKEN", "CI_JOB_TOKEN", "CI_JOB_JWT",
	"CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "SYSTEM_ACCESSTOKEN",
	"BUILDKITE_AGENT_ACCESS_TOKEN", "CIRCLE_TOKEN", "CODECOV_TOKEN", "SONAR_TOKEN", "SNYK_TOKEN", "NPM_TOKEN", "NODE_AUTH_TOKEN",
	"npm_config__authToken", "npm_config_//registry.npmjs.org/:_authToken", "NPM_CONFIG__AUTH", "YARN_NPM_AUTH_TOKEN",
	"PYPI_TOKEN", "PYPI_API_TOKEN", "TWINE_PASSWORD", "POETRY_PYPI_TOKEN_PYPI", "UV_PUBLISH_TOKEN", "CARGO_REGISTRY_TOKEN",
	"GEM_HOST_API_KEY", "NUGET_API_KEY", "DOCKER_PASSWORD", "DOCKER_AUTH_CONFIG", "DOCKERHUB_TOKEN", "HOMEBREW_GITHUB_API_TOKEN",
	"ORG_GRADLE_PROJECT_signingKey", "ORG_GRADLE_PROJECT_signingPassword", "SIGNING_KEY_BASE64", "ANDROID_KEYSTORE_PASSWORD",
	"TF_TOKEN_app_terraform_io", "TFE_TOKEN", "VAULT_TOKEN", "VAULT_SECRET_ID", "CONSUL_HTTP_TOKEN", "CONSUL_HTTP_AUTH",
	"NOMAD_TOKEN", "SENTRY_AUTH_TOKEN", "SENTRY_DSN", "NGROK_AUTHTOKEN",
	"CI_REPOSITORY_URL", "CIRCLE_OIDC_TOKEN", "CIRCLE_OIDC_TOKEN_V2", "BITBUCKET_STEP_OIDC_TOKEN", "GITHUB_CODESPACE_TOKEN",
	// AI providers
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "GEMINI_API_KEY",
	"MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "REPLICATE_API_TOKEN",
	// Chat, mail, payments
	"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "TEAMS_WEBHOOK_URL",
	"SENDGRID_API_KEY", "SMTP_PASSWORD", "SMTP_PASS", "MAILGUN_APIKEY", "STRIPE_SECRET_KEY", "TWILIO_AUTH_TOKEN",
	// Databases and connection URLs
	"PGPASSWORD", "MYSQL_PWD", "MYSQL_ROOT_PASSWORD", "POSTGRES_PASSWORD", "MONGO_INITDB_ROOT_PASSWORD", "REDISCLI_AUTH",
	"DATABASE_URL", "TEST_DATABASE_URL", "SQLALCHEMY_DATABASE_URI", "DB_URL", "MONGODB_URI", "MONGO_URL", "MONGOHQ_URL",
	"REDIS_URL", "REDIS_TLS_URL", "REDISCLOUD_URL", "POSTGRES_URL", "POSTGRESQL_URL", "POSTGRES_URL_NON_POOLING",
	"MYSQL_URL", "AMQP_URL", "CLOUDAMQP_URL", "RABBITMQ_URL", "CELERY_BROKER_URL", "DSN", "APP_DSN",
	"SQLCONNSTR_CONNECTION_STRING",
	// Application secrets, keys and passphrases
	"SECRET_KEY", "SECRET_KEY_BASE", "DJANGO_SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "CLIENT_SECRET", "APP_KEY",
	"RAILS_MASTER_KEY", "FERNET_KEY", "ENCRYPTION_KEY", "PRIVATE_KEY", "SSH_PRIVATE_KEY", "GPG_PRIVATE_KEY",
	"SOPS_AGE_KEY", "API_KEY", "APIKEY", "TOKEN", "PASSWORD", "PASSWD", "BORG_PASSPHRASE", "RESTIC_PASSWORD",
	"GPG_PASSPHRASE", "BW_SESSION", "OP_SESSION_my", "OP_SERVICE_ACCOUNT_TOKEN",
	// Any case
	"github_token", "GitHub_Token", "aws_secret_access_key", "pgpassword", "database_url",
	// Found getting through
	"SSHPASS", "YARN_NPM_AUTH_IDENT", "ORG_GRADLE_PROJECT_signingInMemoryKey", "DATABASE_URL_UNPOOLED", "DATABASE_PUBLIC_URL",
	"DIRECT_URL", "AZURE_CREDENTIALS", "GCP_CREDENTIALS", "KUBE_CONFIG_DATA", "KAFKA_SASL_JAAS_CONFIG", "ID_RSA",
	"PRIVATE_KEY_PEM", "DB_PWD",
}

// everydayEnvNames are what shells, terminals, desktops, toolchains and
// CI set that no builtin template may take from the command: nothing
// here is a secret value.
var everydayEnvNames = []string{
	// Shell and terminal
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LC_ALL", "LANGUAGE", "TZ", "PWD", "OLDPWD",
	"SHLVL", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESS", "LESSOPEN", "LESSKEY", "LS_COLORS", "PS1", "PROMPT_COMMAND",
	"HISTFILE", "HISTSIZE", "HISTCONTROL", "KEYTIMEOUT", "ZDOTDIR", "TMPDIR", "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
	"TERM_SESSION_ID", "ITERM_SESSION_ID", "WT_SESSION", "KITTY_WINDOW_ID", "TMUX", "TMUX_PANE", "STY", "INSIDE_EMACS",
	"VIMRUNTIME", "MYVIMRC", "FZF_DEFAULT_OPTS", "SECURITYSESSIONID", "XPC_SERVICE_NAME", "XPC_FLAGS",
	"__CF_USER_TEXT_ENCODING", "COMMAND_MODE", "WSL_DISTRO_NAME", "WSLENV", "TERMINAL_EMULATOR", "JAVA_TOOL_OPTIONS",
	// Desktop session
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "SESSION_MANAGER", "DESKTOP_SESSION", "GDMSESSION",
	"DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_ID", "XDG_SESSION_TYPE", "XDG_SESSION_CLASS", "XDG_SESSION_DESKTOP",
	"XDG_CURRENT_DESKTOP", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "GTK_IM_MODULE",
	"QT_IM_MODULE", "XMODIFIERS", "XKB_DEFAULT_LAYOUT", "KEYBOARD_LAYOUT", "IBUS_KEYBOARD_MODEL", "GNOME_KEYRING_CONTROL",
	// Keys and agents: sockets and ttys, not secrets
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY", "SSH_ASKPASS", "SSH_ASKPASS_REQUIRE",
	"GIT_ASKPASS", "SUDO_ASKPASS", "GPG_TTY", "GPG_AGENT_INFO", "GNUPGHOME", "PINENTRY_USER_DATA", "KRB5CCNAME",
	"PASSWORD_STORE_DIR", "SOPS_AGE_KEY_FILE", "GPG_KEY_ID",
	// Paths to credentials files: the file is what the policy protects
	"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS",
	"KUBECONFIG", "DOCKER_CONFIG", "NETRC", "PGPASSFILE", "PGSERVICEFILE", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "VAULT_CACERT",
	// Cloud and database settings that are not credentials
	"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SDK_LOAD_CONFIG", "AZURE_CONFIG_DIR",
	"CLOUDSDK_CONFIG", "CLOUDSDK_CORE_PROJECT", "VAULT_ADDR", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "MYSQL_HOST",
	"REDIS_HOST", "DATABASE_HOST", "DB_HOST", "DB_NAME", "DB_USER", "POSTGRES_USER", "POSTGRES_DB", "DOCKER_HOST",
	"ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "OPENAI_BASE_URL", "OPENAI_ORG_ID",
	// Toolchains
	"GOPATH", "GOROOT", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOSUMDB", "GOAUTH", "GOCACHE", "CGO_ENABLED", "CARGO_HOME",
	"RUSTUP_HOME", "RUST_BACKTRACE", "NVM_DIR", "NODE_ENV", "NODE_OPTIONS", "NPM_CONFIG_REGISTRY", "PYENV_ROOT",
	"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PIP_INDEX_URL", "UV_CACHE_DIR",
	"JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_OPTS", "HOMEBREW_PREFIX", "HOMEBREW_NO_AUTO_UPDATE", "CC", "CFLAGS",
	"LDFLAGS", "MAKEFLAGS", "PKG_CONFIG_PATH", "TOKENIZERS_PARALLELISM", "HF_HOME", "HF_HUB_OFFLINE",
	"TRANSFORMERS_CACHE", "TIKTOKEN_CACHE_DIR",
	// Proxies (fence sets its own) and CI
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "CI", "GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_SHA",
	"GITHUB_REF", "GITHUB_WORKSPACE", "GITHUB_EVENT_PATH", "GITHUB_RUN_ID", "GITHUB_ENV", "GITHUB_OUTPUT",
	"ACTIONS_ID_TOKEN_REQUEST_URL", "RUNNER_TEMP", "GITLAB_CI", "CI_JOB_ID", "CI_COMMIT_SHA", "CI_PROJECT_DIR",
	"CI_REGISTRY", "CI_REGISTRY_USER", "BUILDKITE_BRANCH", "CIRCLE_BRANCH", "GITHUB_PATH", "GITHUB_STEP_SUMMARY",
	"ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL", "RUNNER_TOOL_CACHE", "CI_SERVER_URL", "CI_API_V4_URL", "CI_JOB_URL",
	"TOX_TESTENV_PASSENV", "PIP_CERT", "AWS_CA_BUNDLE", "TF_CLI_CONFIG_FILE", "CODESPACES",
	// Agents
	"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "VSCODE_GIT_IPC_HANDLE", "VSCODE_GIT_ASKPASS_MAIN",
	"VSCODE_IPC_HOOK_CLI", "VSCODE_INJECTION", "VSCODE_NONCE",
	"FENCE_SANDBOX",
}

// templateOwnKeys are the credentials a template for running one agent
// passes to it, exactly: its env.allow.
var templateOwnKeys = map[string][]string{
	"claude-code": {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
	"codex":       {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"},
}

// TestTemplateEnv runs both lists through every builtin template's env
// rules: each secret removed but the agent's own key in the templates
// for running an agent, each everyday name kept.
func TestTemplateEnv(t *testing.T) {
	for _, name := range policy.TemplateNames() {
		t.Run(name, func(t *testing.T) {
			r, err := policy.Load(policy.Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
			if err != nil {
				t.Fatal(err)
			}
			deny, allow := r.Config.Env.Deny, r.Config.Env.Allow
			if own := templateOwnKeys[name]; !slices.Equal(allow, own) {
				t.Errorf("env.allow = %q, want %q", allow, own)
			}
			for _, n := range append(slices.Clone(secretEnvNames), "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN") {
				_, removed := EnvRemoval(n, deny, allow)
				if own := slices.Contains(templateOwnKeys[name], n); removed == own {
					t.Errorf("%s: removed = %v, want %v", n, removed, !own)
				}
			}
			for _, n := range everydayEnvNames {
				if rule, removed := EnvRemoval(n, deny, allow); removed {
					t.Errorf("everyday name %s is removed by %q", n, rule)
				}
			}
		})
	}
}

// TestTemplateEnvAllow checks that env.allow keeps a name a template's
// deny rules catch, whatever its case.
func TestTemplateEnvAllow(t *testing.T) {
	r, err := policy.Load(policy.Options{Template: "code", Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		t.Fatal(err)
	}
	allow := []string{"NEXT_PUBLIC_*", "sentry_dsn"}
	for name, want := range map[string]bool{"NEXT_PUBLIC_SUPABASE_ANON_KEY": false, "SENTRY_DSN": false, "SUPABASE_SERVICE_ROLE_KEY": true} {
		if _, got := EnvRemoval(name, r.Config.Env.Deny, allow); got != want {
			t.Errorf("EnvRemoval(%q) removed = %v, want %v", name, got, want)
		}
	}
}

// TestPrivateTempEnv judges inherited TMPDIR and XDG_RUNTIME_DIR against
// the mounts: what the command cannot use inside is replaced, what it
// can is left, and a runtime directory that is not the user's own, or
// is a link, a previous run or another user could have planted, is
// never kept.
func TestPrivateTempEnv(t *testing.T) {
	uid := os.Getuid()
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := real(t.TempDir())
	dir := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own, open, ro, sockets, unbound := dir("own", 0o700), dir("open", 0o755), dir("ro", 0o700), dir("sockets", 0o700), dir("unbound", 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	binds := []Bind{{Path: base, Write: true}, {Path: ro}, {Path: sockets}, {Path: unbound + "-not"}}
	pol := &policy.Policy{UnixSockets: []policy.Rule{{Pattern: sockets + "/bus"}}}
	const private = "XDG_RUNTIME_DIR=" + runtimeDirPrefix
	taken := []Bind{{Path: fmt.Sprintf("%s%d/sub", runtimeDirPrefix, uid)}}
	for i := 1; i < 10; i++ {
		taken = append(taken, Bind{Path: fmt.Sprintf("%s%d-%d", runtimeDirPrefix, uid, i)})
	}
	tests := []struct {
		name         string
		env          []string
		uid          int
		binds        []Bind
		want         []string // the variables after, in order
		runtimeDir   bool     // Mounts.RuntimeDir is set
		runtimeIndex string   // its suffix after the uid, when set
	}{
		{"neither set", []string{"A=1"}, uid, binds, []string{"A=1"}, false, ""},
		{"TMPDIR the private /tmp", []string{"TMPDIR=/tmp"}, uid, binds, []string{"TMPDIR=/tmp"}, false, ""},
		{"TMPDIR writable", []string{"TMPDIR=" + own}, uid, binds, []string{"TMPDIR=" + own}, false, ""},
		{"TMPDIR through a link to a writable one", []string{"TMPDIR=" + link}, uid, binds, []string{"TMPDIR=" + link}, false, ""},
		{"TMPDIR read-only inside", []string{"TMPDIR=" + ro}, uid, binds, []string{"TMPDIR=/tmp"}, false, ""},
		{"TMPDIR missing", []string{"TMPDIR=" + base + "/missing"}, uid, binds, []string{"TMPDIR=/tmp"}, false, ""},
		{"TMPDIR relative", []string{"TMPDIR=tmp"}, uid, binds, []string{"TMPDIR=/tmp"}, false, ""},
		{"TMPDIR of the host's /tmp, hidden", []string{"TMPDIR=" + own}, uid, nil, []string{"TMPDIR=/tmp"}, false, ""},
		{"runtime dir usable", []string{"XDG_RUNTIME_DIR=" + own}, uid, binds, []string{"XDG_RUNTIME_DIR=" + own}, false, ""},
		{"runtime dir open to others", []string{"XDG_RUNTIME_DIR=" + open}, uid, binds, []string{private}, true, ""},
		{"runtime dir another user's", []string{"XDG_RUNTIME_DIR=" + own}, uid + 1, binds, []string{private}, true, ""},
		{"runtime dir a planted link", []string{"XDG_RUNTIME_DIR=" + link}, uid, binds, []string{private}, true, ""},
		{"runtime dir missing", []string{"XDG_RUNTIME_DIR=/run/user/nobody-here"}, uid, binds, []string{private}, true, ""},
		{"runtime dir read-only", []string{"XDG_RUNTIME_DIR=" + ro}, uid, binds, []string{private}, true, ""},
		{"runtime dir read-only with a listed socket", []string{"XDG_RUNTIME_DIR=" + sockets}, uid, binds, []string{"XDG_RUNTIME_DIR=" + sockets}, false, ""},
		{"runtime dir in the host's /tmp, hidden", []string{"XDG_RUNTIME_DIR=" + unbound}, uid, nil, []string{private}, true, ""},
		{"a bind at the private runtime dir", []string{"XDG_RUNTIME_DIR=/missing"}, uid, []Bind{{Path: fmt.Sprintf("%s%d", runtimeDirPrefix, uid), Write: true}}, []string{private}, true, "-1"},
		{"a link made again at the private runtime dir", []string{"XDG_RUNTIME_DIR=/missing"}, uid, nil, []string{private}, true, "-1"},
		{"every private name taken", []string{"XDG_RUNTIME_DIR=/missing"}, uid, taken, nil, false, ""},
		{"a bind over all of /tmp", []string{"XDG_RUNTIME_DIR=/missing", "TMPDIR=/missing"}, uid, []Bind{{Path: "/tmp", Write: true}}, []string{"TMPDIR=/tmp"}, false, ""},
		{"both, and duplicates", []string{"TMPDIR=/missing", "XDG_RUNTIME_DIR=/missing", "TMPDIR=/missing2"}, uid, binds, []string{private, "TMPDIR=/tmp"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &Plan{Env: tt.env, Mounts: Mounts{PrivateTmp: true, Binds: tt.binds}}
			if strings.HasPrefix(tt.name, "a link made again") {
				plan.Mounts.Links = []Link{{Path: fmt.Sprintf("%s%d", runtimeDirPrefix, uid), Target: "/elsewhere"}}
			}
			privateTempEnv(plan, pol, tt.uid)
			var got []string
			for _, kv := range plan.Env {
				if strings.HasPrefix(kv, "TMPDIR=") || strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") || kv == "A=1" {
					got = append(got, kv)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("env = %q, want %q", got, tt.want)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			for i := range got {
				if got[i] != want[i] && !(want[i] == private && strings.HasPrefix(got[i], private)) {
					t.Errorf("env = %q, want %q", got, tt.want)
				}
			}
			wantDir := ""
			if tt.runtimeDir {
				wantDir = fmt.Sprintf("%s%d%s", runtimeDirPrefix, tt.uid, tt.runtimeIndex)
				if !slices.Contains(plan.Env, "XDG_RUNTIME_DIR="+wantDir) {
					t.Errorf("env = %q, want XDG_RUNTIME_DIR=%s", plan.Env, wantDir)
				}
			}
			if host := tt.name == "a bind over all of /tmp"; plan.Mounts.RuntimeDirHost != host {
				t.Errorf("Mounts.RuntimeDirHost = %v, want %v", plan.Mounts.RuntimeDirHost, host)
			}
			if plan.Mounts.RuntimeDir != wantDir {
				t.Errorf("Mounts.RuntimeDir = %q, want %q", plan.Mounts.RuntimeDir, wantDir)
			}
		})
	}
}
