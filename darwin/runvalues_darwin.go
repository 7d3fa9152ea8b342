package darwin

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// userDirs are the per-user temp and cache directories: from fence's own
// TMPDIR when it is the temp one (launchd sets it so), else from
// getconf(1), which asks confstr; "" for what neither gives.
func userDirs() (tempDir, cacheDir string) {
	if t, c := userDirsOf(os.Getenv("TMPDIR")); t != "" {
		return t, c
	}
	tempDir, _ = userDirsOf(getconf("DARWIN_USER_TEMP_DIR"))
	return tempDir, userCacheDirOf(getconf("DARWIN_USER_CACHE_DIR"))
}

func getconf(name string) string {
	out, err := exec.Command("/usr/bin/getconf", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// inheritedTerminals are the devices of the standard streams that are
// terminals (fcntl F_GETPATH), each once.
func inheritedTerminals() []string {
	var out []string
	for fd := range 3 {
		if _, err := unix.IoctlGetTermios(fd, unix.TIOCGETA); err != nil {
			continue
		}
		buf := make([]byte, unix.PathMax)
		_, err := unix.FcntlInt(uintptr(fd), unix.F_GETPATH, int(uintptr(unsafe.Pointer(&buf[0]))))
		runtime.KeepAlive(buf)
		if err != nil {
			continue
		}
		if i := strings.IndexByte(string(buf), 0); i > 0 {
			if dev := terminalDevice(string(buf[:i])); dev != "" && !slices.Contains(out, dev) {
				out = append(out, dev)
			}
		}
	}
	return out
}
