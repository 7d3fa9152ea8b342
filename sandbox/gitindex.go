package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// maxIndexSize bounds the index fence reads after a run (the command
// could grow it to fill fence's memory); git's for a million files is
// about 100 MB.
const maxIndexSize = 512 << 20

// errIndex is an index fence cannot read.
var errIndex = errors.New("unreadable git index")

// gitlinks returns the paths the git index at path records as gitlinks
// (mode 160000: a submodule's commit). hashLen is 20 for SHA-1
// repositories and 32 for SHA-256 ones. Versions 2 to 4 are read.
func gitlinks(path string, hashLen int) ([]string, error) {
	if fi, err := inputs.Stat(path); err == nil && fi.Size() > maxIndexSize {
		return nil, fmt.Errorf("%s is %d bytes, more than fence reads", path, fi.Size())
	}
	b, err := inputs.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 12 || string(b[:4]) != "DIRC" {
		return nil, errIndex
	}
	version := binary.BigEndian.Uint32(b[4:8])
	count := binary.BigEndian.Uint32(b[8:12])
	if version < 2 || version > 4 {
		return nil, errIndex
	}
	var out []string
	var prev []byte
	off := 12
	for range count {
		start := off
		fixed := 40 + hashLen + 2
		if off+fixed > len(b) {
			return nil, errIndex
		}
		mode := binary.BigEndian.Uint32(b[off+24 : off+28])
		flags := binary.BigEndian.Uint16(b[off+40+hashLen : off+fixed])
		off += fixed
		if flags&0x4000 != 0 {
			off += 2 // extended flags: git reads them whatever the version says
		}
		var name []byte
		if version == 4 {
			strip, n := binary.Uvarint(b[min(off, len(b)):])
			if n <= 0 || int(strip) > len(prev) {
				return nil, errIndex
			}
			off += n
			end := bytes.IndexByte(b[min(off, len(b)):], 0)
			if end < 0 {
				return nil, errIndex
			}
			name = append(append([]byte{}, prev[:len(prev)-int(strip)]...), b[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(b[min(off, len(b)):], 0)
			if end < 0 {
				return nil, errIndex
			}
			name = b[off : off+end]
			off += end + 1
			off = start + (off-start+7)/8*8 // entries are padded to 8 bytes
		}
		prev = name
		if mode>>12 == 0o16 { // S_IFGITLINK
			out = append(out, string(name))
		}
	}
	if splitIndex(b[min(off, len(b)):], hashLen) {
		return nil, errSplitIndex
	}
	return out, nil
}

// errSplitIndex is an index whose entries are partly in a shared index.
var errSplitIndex = errors.New("split git index")

// splitIndex reports whether the extensions after the entries hold a
// "link" one: the index is split, and entries live in a sharedindex file.
func splitIndex(ext []byte, hashLen int) bool {
	for len(ext) >= 8+hashLen {
		size := int(binary.BigEndian.Uint32(ext[4:8]))
		if string(ext[:4]) == "link" {
			return true
		}
		if 8+size > len(ext) {
			return false
		}
		ext = ext[8+size:]
	}
	return false
}

// gitlinksByGit asks git itself for the gitlinks of the work tree's index
// (a split index, or one fence cannot read), with no configuration but
// the repository's own and nothing that runs a program; only the git
// found at start, unchanged, since fence runs it outside any sandbox.
func gitlinksByGit(w GitlinkWatch) ([]string, error) {
	if w.Git == "" {
		return nil, errors.New("no git found at start")
	}
	if fileStamp(w.Git) != w.GitStamp {
		return nil, fmt.Errorf("%s changed during the run, and fence runs no program the command could have replaced", w.Git)
	}
	cmd := exec.Command(w.Git, "-C", w.WorkTree, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-optional-locks", "ls-files", "--stage", "-z")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent"}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var links []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		if ok && bytes.HasPrefix(meta, []byte("160000 ")) {
			links = append(links, string(name))
		}
	}
	return links, nil
}

// gitlinkWatches lists the work trees of the repositories found, with the
// state of their index and the repositories below each.
func gitlinkWatches(disk *Disk) []GitlinkWatch {
	if disk == nil || disk.repos == nil {
		return nil
	}
	var out []GitlinkWatch
	git, gitStamp := "", ""
	if found, err := inputs.LookPath("git"); err == nil {
		if real, err := inputs.EvalSymlinks(found); err == nil {
			git, gitStamp = real, fileStamp(real)
		}
	}
	for _, r := range disk.repos.Repos {
		if r.WorkTree == "" || len(r.GitDirs) == 0 {
			continue
		}
		w := GitlinkWatch{WorkTree: r.WorkTree, Index: filepath.Join(r.GitDirs[0], "index"), Stamp: fileStamp(filepath.Join(r.GitDirs[0], "index")), HashLen: 20, Git: git, GitStamp: gitStamp}
		if hashFormat(r.CommonDir) == "sha256" {
			w.HashLen = 32
		}
		for _, other := range disk.repos.Repos {
			if other.WorkTree != "" && other.WorkTree != r.WorkTree && under(other.WorkTree, r.WorkTree) {
				w.Known = append(w.Known, other.WorkTree)
			}
		}
		out = append(out, w)
	}
	return out
}

// hashFormat is the repository's object format, from its config.
func hashFormat(commonDir string) string {
	var includes []string
	for _, e := range readGitConfig(filepath.Join(commonDir, "config"), "", maxGitIncludes, &includes) {
		if e.key == "extensions.objectformat" {
			return e.value
		}
	}
	return "sha1"
}

// NewGitlinkRepos returns the .git of each directory the index of w
// records as a gitlink now that was not a repository at start; nothing
// when the index is as it was (its inode and change time, which no
// command can set back). An index neither fence nor git can read is an
// error: the caller cannot vouch for the work tree.
func NewGitlinkRepos(w GitlinkWatch) ([]string, error) {
	if fileStamp(w.Index) == w.Stamp {
		return nil, nil
	}
	links, err := gitlinks(w.Index, w.HashLen)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if links, err = gitlinksByGit(w); err != nil {
			return nil, fmt.Errorf("read the index of %s: %w", w.WorkTree, err)
		}
	}
	var out []string
	for _, l := range links {
		dir := filepath.Join(w.WorkTree, filepath.FromSlash(l))
		if slices.Contains(w.Known, dir) || !under(dir, w.WorkTree) {
			continue
		}
		if _, err := inputs.Lstat(filepath.Join(dir, ".git")); err == nil {
			out = append(out, filepath.Join(dir, ".git"))
		}
	}
	return out, nil
}
