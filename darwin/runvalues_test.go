package darwin

import "testing"

func TestUserDirsOf(t *testing.T) {
	tests := []struct{ temp, tempDir, cacheDir string }{
		{"/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/", "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T", "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/C"},
		{"/var/folders/8k/x9-y+_0/T", "/var/folders/8k/x9-y+_0/T", "/var/folders/8k/x9-y+_0/C"},
		{"/private/var/folders/ab/cd/T/", "/private/var/folders/ab/cd/T", "/private/var/folders/ab/cd/C"},
		{"/var/folders/zz/abc/C/", "", ""}, // the cache dir is not a temp dir
		{"/var/folders/../../Users/u/T/", "", ""},
		{"/var/folders/zz/../T/", "", ""},
		{"/var/folders/zz/./T/", "", ""},
		{"/var/folders/zz/T/", "", ""},
		{"/var/folders/a/b/c/T/", "", ""},
		{"/tmp/", "", ""},
		{"/Users/u/tmp/var/folders/zz/abc/T/", "", ""},
		{"/var/folders/zz/abc/T/\n/etc", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		tempDir, cacheDir := userDirsOf(tt.temp)
		if tempDir != tt.tempDir || cacheDir != tt.cacheDir {
			t.Errorf("userDirsOf(%q) = %q, %q; want %q, %q", tt.temp, tempDir, cacheDir, tt.tempDir, tt.cacheDir)
		}
	}
	for dir, want := range map[string]string{
		"/var/folders/zz/abc/C/": "/var/folders/zz/abc/C",
		"/var/folders/zz/abc/T/": "",
		"/var/folders/zz/../C/":  "",
		"":                       "",
	} {
		if got := userCacheDirOf(dir); got != want {
			t.Errorf("userCacheDirOf(%q) = %q, want %q", dir, got, want)
		}
	}
}

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
