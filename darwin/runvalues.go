package darwin

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// The run's own values the profile needs, found by the runner: the
// per-user directories confstr reports (DARWIN_USER_TEMP_DIR and
// DARWIN_USER_CACHE_DIR, where clang, swift and xcrun keep their caches).

// userDirForm is the form of those directories: /var/folders/XX/YYYY/T
// (temp) and its sibling C (cache). Each component is the dirhelper's
// name, never "." or "..", so a value of another form names nothing else.
// It is compiled on first use (its repetitions make a large program, which
// every fence, on Linux too, would build at start otherwise).
var userDirForm = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(/private)?/var/folders/[A-Za-z0-9_+-]{1,64}/[A-Za-z0-9_+-]{1,64}/([TC])/?$`)
})

// userDirsOf is the per-user temp and cache directories given temp, the
// temp directory (fence's own TMPDIR, which launchd sets to it, or
// confstr's value): "" for both when temp is not of that form.
func userDirsOf(temp string) (tempDir, cacheDir string) {
	m := userDirForm().FindStringSubmatch(temp)
	if m == nil || m[2] != "T" {
		return "", ""
	}
	tempDir = strings.TrimSuffix(temp, "/")
	return tempDir, path.Join(path.Dir(tempDir), "C")
}

// userCacheDirOf is dir, confstr's DARWIN_USER_CACHE_DIR, when it is of
// that form, else "".
func userCacheDirOf(dir string) string {
	if m := userDirForm().FindStringSubmatch(dir); m == nil || m[2] != "C" {
		return ""
	}
	return strings.TrimSuffix(dir, "/")
}

// terminalDevice is dev, the device of an inherited terminal, when it is
// a plain path below /dev, else "".
func terminalDevice(dev string) string {
	if dev == "" || !strings.HasPrefix(dev, "/dev/") || strings.Contains(dev, "/..") || strings.ContainsAny(dev, "\n\x00") {
		return ""
	}
	return dev
}
