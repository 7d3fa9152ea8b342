package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fence-sandbox/fence/policy"
)

// BenchmarkCheckStdin measures `fence check --stdin` for path queries in
// one process: decode a line, resolve the path against a real tree
// (symlinks followed), decide, encode the answer. The issue asks for at
// least 100,000 decisions per second.
func BenchmarkCheckStdin(b *testing.B) {
	dir := b.TempDir()
	for _, f := range []string{"src/main.go", "src/pkg/util.go", ".env", "keys/server.pem", "docs/README.md"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	os.Symlink("src", filepath.Join(dir, "link"))
	res, err := policy.Load(policy.Options{Template: "code", Dir: dir, Home: "/root", UserConfigDir: "/root/.config/fence"})
	if err != nil {
		b.Fatal(err)
	}
	pol := compileResolved(res, policy.Options{Dir: dir, Home: "/root", UserConfigDir: "/root/.config/fence"})
	var in bytes.Buffer
	const n = 10000
	paths := []string{"src/main.go", "src/pkg/util.go", ".env", "keys/server.pem", "docs/README.md", "link/main.go", "missing/a/b.txt", "/etc/hosts", "/root/.ssh/id_rsa", "../outside.txt"}
	for i := range n {
		fmt.Fprintf(&in, `{"access":%q,"path":%q}`+"\n", []string{"read", "write"}[i%2], paths[i%len(paths)])
	}
	query := in.Bytes()
	b.ResetTimer()
	for b.Loop() {
		if _, err := checkStream(pol, dir, bytes.NewReader(query), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "decisions/s")
}
