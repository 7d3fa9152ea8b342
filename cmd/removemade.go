package cmd

import (
	"os"

	"golang.org/x/sys/unix"
)

// removeMade removes the directory fence made at path, held open as fd
// since, with what the command left in it. The command could write the
// directory and the one it lies in: it may have moved another tree into
// it, or another directory to its name, to have fence delete what it
// could not. So removal goes through fd, never by name below it, takes
// only entries uid owns (what the command, running as uid, could have
// removed itself), never follows a link, and removes path itself only
// while it is still the directory fd holds; whatever is left stays.
func removeMade(path string, fd, uid int) {
	defer unix.Close(fd)
	removeOwned(fd, uid, 0)
	var held, named unix.Stat_t
	if unix.Fstat(fd, &held) != nil || unix.Lstat(path, &named) != nil {
		return
	}
	if held.Dev == named.Dev && held.Ino == named.Ino {
		unix.Rmdir(path) // fails, and leaves it, unless it is empty
	}
}

// maxRemoveDepth bounds how deep removeOwned goes: a deeper tree stays.
const maxRemoveDepth = 64

// removeOwned removes the entries of the directory dirfd that uid owns,
// directories after their own entries.
func removeOwned(dirfd, uid, depth int) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(dup), "")
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || int(st.Uid) != uid {
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Unlinkat(dirfd, name, 0)
			continue
		}
		if depth < maxRemoveDepth {
			removeOwnedDir(dirfd, name, st, uid, depth+1)
		}
		unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
	}
}

// removeOwnedDir empties the directory name of dirfd, as long as it is
// still the one st describes.
func removeOwnedDir(dirfd int, name string, st unix.Stat_t, uid, depth int) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if unix.Fstat(fd, &now) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		return
	}
	removeOwned(fd, uid, depth)
}
