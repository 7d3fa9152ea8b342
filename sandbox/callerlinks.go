package sandbox

import (
	"os"
	"path/filepath"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// callerLinks are the symlinks on the way to the caller's own spellings
// of the home ($HOME) and of the working directory ($PWD, when it is the
// directory fence runs in), that the caller owns and that no other user
// could replace (see linkTrust). The caller chose those spellings, and
// fence itself (its config, its trust record) and the caller's own tools
// already go through them. guardedResolve follows such a link when it
// lies in a temporary directory, in no other tree a sandbox could write
// (not in a workspace below /var/tmp, say), and leads to a place inside
// the same temporary directory (HOME=/tmp/home linked to /tmp/real, a
// working directory entered through a link in /tmp), even into a tree
// this run may not write: whatever could have planted it there could
// write that place already. Any other link is judged as guardedResolve
// judges every link: a sandbox that could write /tmp could have made
// /tmp/build a link to the home, ready for a `cd /tmp/build`, and one
// that wrote a workspace could have made a link in it to a sibling. untrusted
// says, for the other links on these ways, why fence did not take them
// as the caller's.
func callerLinks(p *policy.Policy, d *Disk) (trusted map[string]bool, untrusted map[string]string) {
	trusted, untrusted = map[string]bool{}, map[string]string{}
	var spellings []string
	if p.Home != "" {
		spellings = append(spellings, p.Home)
	}
	if p.Dir != "" && isWorkingDir(p.Dir) {
		spellings = append(spellings, p.Dir)
	}
	for _, s := range spellings {
		d.resolveLinks("/", s, nil, func(l linkSeen, _, _ string) error {
			if why := linkTrust(l.path); why != "" {
				untrusted[l.path] = why
			} else {
				trusted[l.path] = true
			}
			return nil
		})
	}
	return trusted, untrusted
}

// isWorkingDir reports whether dir is this process's working directory
// (the kernel's, whatever links dir is spelled through).
func isWorkingDir(dir string) bool {
	here, err := inputs.Stat(".")
	if err != nil {
		return false
	}
	there, err := inputs.Stat(dir)
	return err == nil && os.SameFile(here, there)
}

// linkTrust says why the symlink at link, at its canonical place, may
// not be the caller's own: empty when the caller owns it and every
// directory from its own up to the root is the caller's or root's and
// writable by no one else, or sticky (as /tmp is: there only an entry's
// owner may rename or remove it).
func linkTrust(link string) string {
	fi, err := inputs.Lstat(link)
	if err != nil {
		return "fence could not look at it (" + err.Error() + ")"
	}
	if !ownedByCaller(fi) {
		return "it belongs to " + ownerOf(fi) + ", not to you"
	}
	for dir := filepath.Dir(link); ; dir = filepath.Dir(dir) {
		if why := othersMayChange(dir); why != "" {
			return why
		}
		if dir == "/" {
			return ""
		}
	}
}

// tempTreeOf is the temporary directory (TempTrees) that holds dir.
func tempTreeOf(dir string) (string, bool) {
	for _, t := range TempTrees {
		if under(dir, t) {
			return t, true
		}
	}
	return "", false
}
