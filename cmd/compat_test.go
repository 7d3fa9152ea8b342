package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// upstreamKeys are the config keys upstream fence documents (its
// configuration page and schema), as key paths.
var upstreamKeys = []string{
	"$schema", "extends", "allowPty", "forceNewSession",
	"network.allowedDomains", "network.deniedDomains", "network.allowUnixSockets", "network.allowAllUnixSockets",
	"network.allowLocalBinding", "network.allowLocalOutbound", "network.allowLocalOutboundPorts",
	"network.httpProxyPort", "network.socksProxyPort", "network.upstreamProxy", "network.defaultAction",
	"filesystem.wslInterop", "filesystem.allowRead", "filesystem.allowExecute", "filesystem.defaultDenyRead",
	"filesystem.strictDenyRead", "filesystem.denyRead", "filesystem.allowWrite", "filesystem.denyWrite",
	"filesystem.allowGitConfig",
	"devices.mode", "devices.allow",
	"command.deny", "command.allow", "command.useDefaults", "command.runtimeExecPolicy",
	"command.acceptSharedBinaryCannotRuntimeDeny",
	"ssh.allowedHosts", "ssh.deniedHosts", "ssh.allowedCommands", "ssh.deniedCommands",
	"ssh.allowAllCommands", "ssh.inheritDeny",
	"macos.mach.lookup", "macos.mach.register",
}

// compatFixtures are the configs of testdata/compat, written as a user of
// upstream fence writes them.
func compatFixtures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdata, "compat", "*.jsonc"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/compat: %v", err)
	}
	return files
}

// TestCompatFixtures loads each config of testdata/compat as fence config
// show does and compares what it prints, stdout then stderr, with the
// fixture's golden file: each must load, to the policy it meant.
func TestCompatFixtures(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, file := range compatFixtures(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonc")
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main([]string{"config", "show", "-s", file}, &stdout, &stderr); code != 0 {
				t.Fatalf("%s does not load (exit %d): %s", name, code, stderr.String())
			}
			got := "-- stdout --\n" + stdout.String() + "-- stderr --\n" + stderr.String()
			got = strings.ReplaceAll(got, testdata, "testdata")
			got = strings.ReplaceAll(got, home, "$HOME")
			golden(t, "compat/"+name+".golden", []byte(got))
		})
	}
}

// TestCompatFixturesCoverUpstreamKeys: between them the fixtures use
// every key upstream documents, and no key it does not.
func TestCompatFixturesCoverUpstreamKeys(t *testing.T) {
	used := map[string]bool{}
	for _, file := range compatFixtures(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		std, err := hujson.Standardize(src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var v map[string]any
		if err := json.Unmarshal(std, &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		keyPaths("", v, used)
	}
	for _, k := range upstreamKeys {
		if !used[k] {
			t.Errorf("no fixture uses %s", k)
		}
	}
	var extra []string
	for k := range used {
		if !slices.Contains(upstreamKeys, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("fixtures use keys upstream does not document: %s", strings.Join(extra, ", "))
	}
}

// keyPaths adds the leaf key paths of v (objects are walked, everything
// else is a leaf; macos.mach is an object of lists) to out.
func keyPaths(prefix string, v map[string]any, out map[string]bool) {
	for k, sub := range v {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if obj, ok := sub.(map[string]any); ok {
			keyPaths(path, obj, out)
			continue
		}
		out[path] = true
	}
}
