package darwin

import "testing"

func TestTerminalDevice(t *testing.T) {
	for dev, want := range map[string]string{
		"/dev/ttys003":      "/dev/ttys003",
		"/dev/tty.usbmodem": "/dev/tty.usbmodem",
		"/dev/console":      "/dev/console",
		"/dev/../etc/x":     "",
		"/dev/ttys1\n":      "",
		"/Users/u/tty":      "",
		"":                  "",
	} {
		if got := terminalDevice(dev); got != want {
			t.Errorf("terminalDevice(%q) = %q, want %q", dev, got, want)
		}
	}
}
