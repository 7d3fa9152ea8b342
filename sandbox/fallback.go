package sandbox

import (
	"os"
	"path"
	"slices"
)

// Weaker lists what a Landlock-only sandbox does not enforce that the
// namespace sandbox does, for the warning fence prints when it falls back.
var Weaker = []string{
	"no mount namespace: directories on the way to a denied path cannot be listed, and new files cannot be created directly in them",
	"no private /tmp: TMPDIR points to a private directory instead",
	"no pid namespace: host processes are visible; daemons the command starts are killed when it ends (or times out), fence being their subreaper, but not when fence itself is killed with SIGKILL, and not processes a host service starts on the command's request (systemd --user over D-Bus, a tmux server already running) unless Landlock (ABI 9) keeps the service's socket out of reach",
	"no read-only host: Landlock does not cover file modes, owners or extended attributes, so the seccomp filter refuses setuid and setgid bits (by chmod and when creating a file; openat2 fails with ENOSYS), a world-writable chmod, and every change to extended attributes and ACLs (EOPNOTSUPP); other mode changes to the user's own files outside the policy (chmod 644 ~/.ssh/id_rsa, chmod +x on a hook git ignores for lack of it) and their timestamps are not refused",
	"no network namespace: Landlock limits TCP to fence's proxies on the host's loopback (and allowLocalOutboundPorts, by port alone, on any address); UDP is not restricted",
	"no mount masks: the host's unix sockets stay reachable unless Landlock (ABI 9) can refuse them",
}

// WeakerRoot is what the Landlock-only sandbox refuses a command that
// runs as root, who owns every system file: the warning adds it to Weaker.
const WeakerRoot = "as root: chmod and chown fail with \"Operation not permitted\" everywhere, the workspace included (chmod +x, tar x, cp -p, install, npm or pip installing scripts), since nothing else would keep root from changing the modes and owners of system files; run as a normal user, or where user namespaces are available, to have them"

// LandlockOnly rewrites plan for a system where fence cannot create user
// namespaces, so that Landlock alone enforces the filesystem policy. A
// deny inside an allowed tree is expressed by granting the tree's other
// entries, so that the denied path gets no rule at all. tmpDir is a
// private directory the command may write, in place of a private /tmp.
func LandlockOnly(plan *Plan, tmpDir string) *Plan {
	p := *plan
	p.Mounts = Mounts{}
	p.Env = append(slices.Clone(plan.Env), "TMPDIR="+tmpDir)
	var deniedRead, deniedWrite []string
	for _, m := range plan.Mounts.Masks {
		deniedRead = append(deniedRead, m.Path)
	}
	deniedWrite = slices.Clone(deniedRead)
	for _, b := range plan.Mounts.Binds {
		if !b.Write {
			deniedWrite = append(deniedWrite, b.Path)
		}
	}
	var rules []LandlockRule
	for _, r := range plan.Landlock.Rules {
		denied := deniedRead
		switch {
		case r.Path == "/dev" || r.Path == "/tmp" && r.Why == "the private /tmp":
			continue
		case r.Access == "write":
			denied = deniedWrite
		}
		for _, g := range carve(r.Path, denied) {
			rules = append(rules, LandlockRule{Path: g, Access: r.Access, Why: r.Why})
		}
	}
	rules = append(rules, LandlockRule{Path: tmpDir, Access: "write", Why: "the private TMPDIR"})
	devices := []string{"/dev"}
	if plan.Mounts.Devices != "host" {
		devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}
		devices = append(devices, plan.Mounts.DevAllow...)
	}
	for _, d := range devices {
		for _, g := range carve(d, deniedRead) {
			rules = append(rules, LandlockRule{Path: g, Access: "dev", Why: "device nodes"})
		}
	}
	p.Landlock = Landlock{
		Rules:  rules,
		MinABI: 6,
		Reasons: append(slices.Clone(plan.Landlock.Reasons),
			"without namespaces, ABI 3 is needed to control truncation and ABI 6 to keep signals and abstract unix sockets inside the sandbox"),
	}
	return &p
}

// carve returns paths that together grant root minus everything in denied:
// root itself when nothing denied lies below it, nothing when root is
// denied, otherwise the carving of each entry of root. Symlinks are never
// granted: a rule on a link would grant its target.
func carve(root string, denied []string) []string {
	if slices.ContainsFunc(denied, func(d string) bool { return under(root, d) }) {
		return nil
	}
	if !slices.ContainsFunc(denied, func(d string) bool { return under(d, root) }) {
		return []string{root}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, carve(path.Join(root, e.Name()), denied)...)
	}
	return out
}
