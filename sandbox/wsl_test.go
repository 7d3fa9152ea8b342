package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWSLKernel: the release and version strings of WSL 1 and 2 kernels
// name Microsoft or WSL; those of other kernels do not.
func TestWSLKernel(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"5.15.167.4-microsoft-standard-WSL2\n", true},
		{"4.4.0-19041-Microsoft\n", true},
		{"Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0) #1 SMP\n", true},
		{"6.1.0-18-amd64\n", false},
		{"Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) #45-Ubuntu SMP\n", false},
		{"", false},
	} {
		if got := WSLKernel(tt.s); got != tt.want {
			t.Errorf("WSLKernel(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestIsWSL reads fake kernel identity files: the release decides, the
// version string where the release is missing.
func TestIsWSL(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wslRelease := write("wsl-osrelease", "5.15.167.4-microsoft-standard-WSL2\n")
	plainRelease := write("osrelease", "6.1.0-18-amd64\n")
	wslVersion := write("wsl-version", "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1237-Microsoft\n")
	plainVersion := write("version", "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n")
	missing := filepath.Join(dir, "missing")
	for _, tt := range []struct {
		name  string
		files []string
		want  bool
	}{
		{"WSL 2 release", []string{wslRelease, plainVersion}, true},
		{"the release decides", []string{plainRelease, wslVersion}, false},
		{"WSL 1 release", []string{write("wsl1-osrelease", "4.4.0-19041-Microsoft\n"), plainVersion}, true},
		{"not WSL", []string{plainRelease, plainVersion}, false},
		{"unreadable", []string{missing, missing}, false},
		{"release missing, version WSL", []string{missing, wslVersion}, true},
	} {
		testOnlyKernelIdentity = tt.files
		if got := IsWSL(); got != tt.want {
			t.Errorf("%s: IsWSL() = %v, want %v", tt.name, got, tt.want)
		}
	}
	testOnlyKernelIdentity = nil
}

// BenchmarkIsWSL is what the detection adds to every run that compiles a
// policy: one small read of /proc.
func BenchmarkIsWSL(b *testing.B) {
	for b.Loop() {
		IsWSL()
	}
}
