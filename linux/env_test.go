//go:build linux

package linux_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// templateSecrets are credentials in the caller's environment that the
// code template keeps from the command, each with a value that must not
// show inside either.
var templateSecrets = []string{
	"AWS_SECRET_ACCESS_KEY=aws-secret-value",
	"AWS_ACCESS_KEY_ID=aws-key-id-value",
	"AWS_SESSION_TOKEN=aws-session-value",
	"PGPASSWORD=pg-password-value",
	"github_token=gh-lower-value",
	"GH_TOKEN=gh-upper-value",
	"DATABASE_URL=postgres://u:db-password-value@h/db",
	"OPENAI_API_KEY=openai-value",
	"NPM_CONFIG__AUTH=npm-auth-value",
}

// templateEveryday are names that look like credentials to a careless
// pattern but are not, and must reach the command unchanged.
var templateEveryday = []string{
	"TOKENIZERS_PARALLELISM=false",
	"GPG_TTY=/dev/pts/9",
	"KEYTIMEOUT=1",
	"TERM_SESSION_ID=w0t0p0:term",
	"XDG_SESSION_TYPE=wayland",
	"AWS_PROFILE=dev",
	"AWS_REGION=eu-west-1",
	"AWS_SHARED_CREDENTIALS_FILE=/nonexistent/credentials",
	"GOOGLE_APPLICATION_CREDENTIALS=/nonexistent/key.json",
	"PGHOST=db.internal",
	"PASSWORD_STORE_DIR=/nonexistent/store",
	"LANG=C.UTF-8",
}

// TestTemplateEnvSecrets runs env under -t code with credentials and
// everyday names in the environment, in the namespace engine and the
// Landlock-only one: the credentials are gone, the everyday names are
// there, and -d names what it removed and why, never a value.
func TestTemplateEnvSecrets(t *testing.T) {
	env := slices.Concat(templateSecrets, templateEveryday)
	for _, u := range users(t) {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, u.uid, `{}`)
			r := w.runIn(t, w.ws, env, filepath.Join(bin, "fence"), "-t", "code", "-d", "--", "env")
			checkTemplateEnv(t, r)
		})
	}
	t.Run("landlock-only", func(t *testing.T) {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("unshare not found: cannot make a user namespace without nested ones")
		}
		w := newWorld(t, os.Getuid(), `{}`)
		cmd := exec.Command("unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh",
			filepath.Join(bin, "fence"), "-t", "code", "--degraded=warn", "-d", "--", "env")
		cmd.Dir, cmd.Env = w.ws, append([]string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}, env...)
		checkTemplateEnv(t, runResult(t, cmd))
	})
}

func checkTemplateEnv(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	inside := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var debug string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "fence: debug: env: removed ") {
			debug = l
		}
	}
	for _, kv := range templateSecrets {
		name, value, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(inside, func(l string) bool { return strings.HasPrefix(l, name+"=") }) {
			t.Errorf("%s reached the command", name)
		}
		if strings.Contains(r.stdout, value) || strings.Contains(r.stderr, value) {
			t.Errorf("the value of %s shows in the output", name)
		}
		if !strings.Contains(debug, name) {
			t.Errorf("-d does not name %s as removed: %q", name, debug)
		}
	}
	for _, kv := range templateEveryday {
		if !slices.Contains(inside, kv) {
			t.Errorf("%s did not reach the command:\n%s", kv, r.stdout)
		}
	}
	if !slices.Contains(inside, "FENCE_SANDBOX=1") {
		t.Errorf("FENCE_SANDBOX=1 is not set inside:\n%s", r.stdout)
	}
	for _, want := range []string{`github_token by env.deny "*TOKEN" (builtin template: read-only)`, `PGPASSWORD by env.deny "*PASSWORD" (builtin template: read-only)`, `DATABASE_URL by env.deny "*DATABASE_URL" (builtin template: read-only)`} {
		if !strings.Contains(debug, want) {
			t.Errorf("-d line %q does not say %q", debug, want)
		}
	}
}
