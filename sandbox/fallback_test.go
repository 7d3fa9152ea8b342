package sandbox

import (
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLandlockDevices: the Landlock-only sandbox grants the harmless
// devices and fence's own terminals, never all of /dev/pts or /dev/shm
// unless the policy passes them through (and /dev/pts brings /dev/ptmx).
func TestLandlockDevices(t *testing.T) {
	minimal := []string{"/dev/full", "/dev/null", "/dev/random", "/dev/tty", "/dev/urandom", "/dev/zero"}
	tests := []struct {
		name      string
		m         Mounts
		terminals []string
		want      []string
	}{
		{"minimal", Mounts{Devices: "minimal"}, nil, minimal},
		{"own terminal", Mounts{Devices: "minimal"}, []string{"/dev/pts/3", "/dev/pts/3"}, append([]string{"/dev/pts/3"}, minimal...)},
		{"passed through", Mounts{Devices: "minimal", DevAllow: []string{"/dev/kvm"}}, nil, append([]string{"/dev/kvm"}, minimal...)},
		{"pts passed through", Mounts{Devices: "minimal", DevAllow: []string{"/dev/pts"}}, nil, append([]string{"/dev/ptmx", "/dev/pts"}, minimal...)},
		{"host", Mounts{Devices: "host"}, []string{"/dev/pts/3"}, []string{"/dev"}},
	}
	for _, tt := range tests {
		got := landlockDevices(tt.m, tt.terminals)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: landlockDevices = %q, want %q", tt.name, got, want)
		}
	}
}

// TestLandlockOnlySockets: the host's sockets the plan's "unix" rules do
// not grant become the plan's only masks, for the supervisor to refuse;
// a socket among the old masks is not carved around.
func TestLandlockOnlySockets(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "host.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	listed := filepath.Join(dir, "listed.sock")
	plan := &Plan{
		Mounts: Mounts{Masks: []Mask{{Path: sock, Why: "a host unix socket"}}},
		Landlock: Landlock{Rules: []LandlockRule{
			{Path: dir, Access: "write", Why: "allowWrite"},
			{Path: listed, Access: "unix", Why: "network.allowUnixSockets"},
		}},
	}
	ll := LandlockOnly(plan, t.TempDir(), nil, []string{sock, listed})
	var masks []string
	for _, m := range ll.Mounts.Masks {
		if !m.Socket {
			t.Errorf("mask %q is not a socket's", m.Path)
		}
		masks = append(masks, m.Path)
	}
	if !slices.Equal(masks, []string{sock}) {
		t.Errorf("masks = %q, want only %q", masks, sock)
	}
	if !slices.ContainsFunc(ll.Landlock.Rules, func(r LandlockRule) bool { return r.Path == dir && r.Access == "write" }) {
		t.Errorf("the socket's directory lost its rule: %+v", ll.Landlock.Rules)
	}
}

// TestLandlockOnlyKeepsOutOfDev: with reads open on "/", no rule of the
// Landlock-only plan reaches into /dev but the devices it grants, so the
// host's other terminals and /dev/shm stay out of reach; devices "host"
// keeps all of /dev.
func TestLandlockOnlyKeepsOutOfDev(t *testing.T) {
	for _, devices := range []string{"minimal", "host"} {
		plan := &Plan{
			Mounts:   Mounts{Devices: devices},
			Landlock: Landlock{Rules: []LandlockRule{{Path: "/", Access: "read", Why: "reads are open"}, {Path: "/dev", Access: "dev", Why: "the sandbox's /dev"}}},
		}
		ll := LandlockOnly(plan, "/tmp/fence-tmp-x", []string{"/dev/pts/3"}, nil)
		for _, p := range []string{"/dev/pts/7", "/dev/shm/x", "/dev/vcs1", "/dev/null", "/dev/pts/3", "/etc/passwd"} {
			reached := slices.ContainsFunc(ll.Landlock.Rules, func(r LandlockRule) bool { return p == r.Path || under(p, r.Path) })
			want := devices == "host" || !strings.HasPrefix(p, "/dev/") || p == "/dev/null" || p == "/dev/pts/3"
			if reached != want {
				t.Errorf("devices %s: a rule reaches %s: %v, want %v\n%v", devices, p, reached, want, ll.Landlock.Rules)
			}
		}
	}
}
