package darwin

import (
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
