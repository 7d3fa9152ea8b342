package sandbox

import (
	"strings"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// kernelIdentity are the files where the kernel names itself: its
// release (/proc/sys/kernel/osrelease) and version string
// (/proc/version). WSL's kernels say Microsoft and WSL there
// ("5.15.167.4-microsoft-standard-WSL2"; WSL 1's "4.4.0-19041-Microsoft").
var kernelIdentity = []string{"/proc/sys/kernel/osrelease", "/proc/version"}

// testOnlyKernelIdentity, when set, is read in place of kernelIdentity.
var testOnlyKernelIdentity []string

// IsWSL reports whether fence runs on the Windows Subsystem for Linux,
// as the kernel's release says, or its version string where the release
// cannot be read (the version string holds the release). A file it
// cannot read says nothing; off Linux there are none.
func IsWSL() bool {
	files := kernelIdentity
	if testOnlyKernelIdentity != nil {
		files = testOnlyKernelIdentity
	}
	for _, f := range files {
		if b, err := inputs.ReadFile(f); err == nil {
			return WSLKernel(string(b))
		}
	}
	return false
}

// WSLKernel reports whether a kernel release or version string is one of
// WSL's: it names Microsoft or WSL, in any case.
func WSLKernel(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "microsoft") || strings.Contains(l, "wsl")
}
