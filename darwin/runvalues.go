package darwin

import "strings"

// The run's own values the profile needs, found by the runner: the
// devices of the terminals the command inherits.

// terminalDevice is dev, the device of an inherited terminal, when it is
// a plain path below /dev, else "".
func terminalDevice(dev string) string {
	if dev == "" || !strings.HasPrefix(dev, "/dev/") || strings.Contains(dev, "/..") || strings.ContainsAny(dev, "\n\x00") {
		return ""
	}
	return dev
}
