package policy

// WSLInit is WSL's init, which is also its interop binary: the kernel
// runs a Windows program (.exe) through it, as binfmt_misc's
// interpreter, and /usr/bin/wslpath is a link to it.
const WSLInit = "/init"

// KeyWSLInterop is the rule kind of the /init that filesystem.wslInterop
// makes executable.
const KeyWSLInterop = "filesystem.wslInterop"

// WSLInterop says whether filesystem.wslInterop makes /init executable:
// on WSL (env.WSL) unless it is false. On a kernel that is not WSL's,
// true changes nothing (see WSLInteropDeclined): /init there is some
// other program, a container's init or an initramfs leftover, which the
// config did not mean to allow.
func WSLInterop(fs Filesystem, env Env) bool {
	return env.WSL && (fs.WSLInterop == nil || *fs.WSLInterop)
}

// WSLInteropDeclined says filesystem.wslInterop is true where the kernel
// is not WSL's, so that fence allows nothing for it and says so.
func WSLInteropDeclined(fs Filesystem, env Env) bool {
	return isTrue(fs.WSLInterop) && !env.WSL
}

// wslRules are the execute rules filesystem.wslInterop adds: /init, on
// its own (the interop socket it talks to stays as
// network.allowUnixSockets has it).
func wslRules(fs Filesystem, env Env) []Rule {
	if !WSLInterop(fs, env) {
		return nil
	}
	source := "fence (the kernel is WSL's)"
	if fs.WSLInterop != nil {
		source = "filesystem.wslInterop: true"
	}
	return []Rule{{Pattern: WSLInit, Origin: "filesystem.wslInterop: WSL's interop binary", Key: KeyWSLInterop, Source: source}}
}
