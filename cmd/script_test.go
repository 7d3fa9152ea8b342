package cmd

import (
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite golden files and the expectations in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"fence": Execute, "fence-init": Execute})
}

// TestScript runs the CLI scenarios in testdata/script against the real
// fence command line, each in a fresh directory with its own HOME.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "../testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			home := env.WorkDir + "/home"
			env.Setenv("HOME", home)
			env.Setenv("XDG_CONFIG_HOME", "")
			env.Setenv("MY_TOKEN", "hunter2")
			return os.MkdirAll(home, 0o755)
		},
	})
}
