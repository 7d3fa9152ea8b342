package policy

import "testing"

// TestWSLInterop: /init is executable where the kernel is WSL's, unless
// filesystem.wslInterop is false; elsewhere true allows nothing and is
// declined. Under open reads every path executes anyway, so the cases
// use defaultDenyRead, where /init is no system path.
func TestWSLInterop(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		set      *bool
		wsl      bool
		allowed  bool
		rule     string
		declined bool
	}{
		{"detected on WSL", nil, true, true, KeyWSLInterop, false},
		{"true on WSL", &yes, true, true, KeyWSLInterop, false},
		{"false on WSL", &no, true, false, "filesystem.defaultDenyRead", false},
		{"detected elsewhere", nil, false, false, "filesystem.defaultDenyRead", false},
		{"true elsewhere is declined", &yes, false, false, "filesystem.defaultDenyRead", true},
		{"false elsewhere", &no, false, false, "filesystem.defaultDenyRead", false},
	}
	for _, tt := range tests {
		fs := Filesystem{DefaultDenyRead: true, WSLInterop: tt.set}
		env := Env{Dir: "/w", Home: "/h", WSL: tt.wsl}
		d := Compile(Config{Filesystem: fs}, env).CheckPath("exec", WSLInit, WSLInit)
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("%s: CheckPath(exec, /init) = %v %s, want %v %s", tt.name, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
		if got := WSLInteropDeclined(fs, env); got != tt.declined {
			t.Errorf("%s: WSLInteropDeclined = %v, want %v", tt.name, got, tt.declined)
		}
	}
}

// TestWSLInteropMerge: a child's wslInterop wins when it sets one, so a
// project can turn off what the user config left to detection or set.
func TestWSLInteropMerge(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		parent, child, want *bool
	}{
		{nil, nil, nil}, {&yes, nil, &yes}, {&yes, &no, &no}, {nil, &yes, &yes}, {&no, &yes, &yes},
	} {
		got := Merge(Config{Filesystem: Filesystem{WSLInterop: tt.parent}}, Config{Filesystem: Filesystem{WSLInterop: tt.child}}).Filesystem.WSLInterop
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("Merge(%v, %v) = %v, want %v", show(tt.parent), show(tt.child), show(got), show(tt.want))
		}
	}
}

func show(b *bool) string {
	if b == nil {
		return "null"
	}
	if *b {
		return "true"
	}
	return "false"
}
