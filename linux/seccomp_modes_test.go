//go:build linux

package linux

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestSeccompModeRules runs the filter in x/net/bpf's interpreter on
// system calls that change modes, owners and extended attributes: the
// namespace engine's filter lets them all through; the Landlock-only
// engine's refuses setuid and setgid bits, world-writable chmods, ACLs
// and, for root, every chmod and chown.
func TestSeccompModeRules(t *testing.T) {
	const (
		allow   = retAllow
		eperm   = retEPERM
		enosys  = retNoSys
		enotsup = retNoXattr
	)
	type call struct {
		name string
		nr   uint32
		args [4]uint32
	}
	var (
		chmod755    = call{"fchmodat 0755", unix.SYS_FCHMODAT, [4]uint32{0, 0, 0o755}}
		chmod4755   = call{"fchmodat 4755", unix.SYS_FCHMODAT, [4]uint32{0, 0, 0o4755}}
		chmod666    = call{"fchmodat 0666", unix.SYS_FCHMODAT, [4]uint32{0, 0, 0o666}}
		chmod2775   = call{"fchmodat2 2775", unix.SYS_FCHMODAT2, [4]uint32{0, 0, 0o2775}}
		fchmod664   = call{"fchmod 0664", unix.SYS_FCHMOD, [4]uint32{0, 0o664}}
		fchmod6755  = call{"fchmod 6755", unix.SYS_FCHMOD, [4]uint32{0, 0o6755}}
		create644   = call{"openat O_CREAT 0644", unix.SYS_OPENAT, [4]uint32{0, 0, unix.O_CREAT | unix.O_WRONLY, 0o644}}
		create4755  = call{"openat O_CREAT 4755", unix.SYS_OPENAT, [4]uint32{0, 0, unix.O_CREAT | unix.O_WRONLY, 0o4755}}
		tmpfile2755 = call{"openat O_TMPFILE 2755", unix.SYS_OPENAT, [4]uint32{0, 0, unix.O_TMPFILE | unix.O_WRONLY, 0o2755}}
		read4755    = call{"openat O_RDONLY, a stray 4755", unix.SYS_OPENAT, [4]uint32{0, 0, unix.O_RDONLY, 0o4755}}
		mknod4755   = call{"mknodat S_IFREG|4755", unix.SYS_MKNODAT, [4]uint32{0, 0, unix.S_IFREG | 0o4755}}
		openat2     = call{"openat2", unix.SYS_OPENAT2, [4]uint32{}}
		fsetxattr   = call{"fsetxattr", unix.SYS_FSETXATTR, [4]uint32{}}
		setxattrat  = call{"setxattrat", unix.SYS_SETXATTRAT, [4]uint32{}}
		removexattr = call{"removexattr", unix.SYS_REMOVEXATTR, [4]uint32{}}
		fchownat    = call{"fchownat", unix.SYS_FCHOWNAT, [4]uint32{}}
		getpid      = call{"getpid", unix.SYS_GETPID, [4]uint32{}}
	)
	all := []call{chmod755, chmod4755, chmod666, chmod2775, fchmod664, fchmod6755, create644, create4755, tmpfile2755, read4755, mknod4755, openat2, fsetxattr, setxattrat, removexattr, fchownat, getpid}
	tests := []struct {
		name string
		o    seccompOptions
		want map[string]uint32 // the rest: allowed
	}{
		{"namespace engine", seccompOptions{}, nil},
		{"namespace engine, root", seccompOptions{root: true}, nil},
		{"Landlock-only", seccompOptions{guardModes: true}, map[string]uint32{
			chmod4755.name: eperm, chmod666.name: eperm, chmod2775.name: eperm, fchmod6755.name: eperm,
			create4755.name: eperm, tmpfile2755.name: eperm, mknod4755.name: eperm, openat2.name: enosys,
			fsetxattr.name: enotsup, setxattrat.name: enotsup, removexattr.name: enotsup,
		}},
		{"Landlock-only, root", seccompOptions{guardModes: true, root: true}, map[string]uint32{
			chmod755.name: eperm, chmod4755.name: eperm, chmod666.name: eperm, chmod2775.name: eperm, fchmod664.name: eperm, fchmod6755.name: eperm,
			create4755.name: eperm, tmpfile2755.name: eperm, mknod4755.name: eperm, openat2.name: enosys,
			fsetxattr.name: enotsup, setxattrat.name: enotsup, removexattr.name: enotsup, fchownat.name: eperm,
		}},
		{"Landlock-only, sockets denied", seccompOptions{guardModes: true, denySockets: true}, map[string]uint32{
			chmod4755.name: eperm, chmod666.name: eperm, chmod2775.name: eperm, fchmod6755.name: eperm,
			create4755.name: eperm, tmpfile2755.name: eperm, mknod4755.name: eperm, openat2.name: enosys,
			fsetxattr.name: enotsup, setxattrat.name: enotsup, removexattr.name: enotsup,
		}},
	}
	for _, tt := range tests {
		vm := filterVM(t, tt.o)
		for _, c := range all {
			want, ok := tt.want[c.name]
			if !ok {
				want = allow
			}
			if got := runFilter(t, vm, c.nr, c.args); got != want {
				t.Errorf("%s: %s = %#x, want %#x", tt.name, c.name, got, want)
			}
		}
	}
}

func filterVM(t *testing.T, o seccompOptions) *bpf.VM {
	t.Helper()
	raw, err := seccompProgram(o)
	if err != nil {
		t.Fatal(err)
	}
	prog := make([]bpf.Instruction, len(raw))
	for i, r := range raw {
		prog[i] = r.Disassemble()
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("%+v: %v", o, err)
	}
	return vm
}

// runFilter runs the filter on a struct seccomp_data for this machine's
// architecture. The interpreter loads words in network byte order, so
// each is stored so, at the offset the filter reads it from.
func runFilter(t *testing.T, vm *bpf.VM, nr uint32, args [4]uint32) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[offNr:], nr)
	binary.BigEndian.PutUint32(data[offArch:], auditArch)
	for i, a := range args {
		binary.BigEndian.PutUint32(data[offArg0+8*i:], a)
	}
	ret, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(ret)
}
