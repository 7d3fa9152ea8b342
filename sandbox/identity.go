package sandbox

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// A denied program is recognised by what it is, not by the name it is
// called by. For each command name a deny rule starts with, fence finds
// at start the files the name denotes (on the PATH, in the standard bin
// directories and in git's exec-path, after symlinks) and keeps their
// identity: the file (device and inode, so every hard link) and, for
// copies, the content (the ELF build ID where there is one, else a
// SHA-256 of the bytes). The same directories are searched for other
// names of those programs (a symlink, a hard link, a copy of the same
// size and content). Preflight and argv mode judge a command whose name
// is one of those, or a path to such a file, as the denied name; path
// mode masks each of them.

// GitExecPaths are where git keeps its dashed programs and its own copy
// of itself.
var GitExecPaths = []string{"/usr/lib/git-core", "/usr/libexec/git-core"}

// ProgramIdentity is one file a denied command name denotes, and the
// other names it has in the searched directories.
type ProgramIdentity struct {
	Name    string   `json:"name"`            // the rule's command name
	Path    string   `json:"path"`            // the file, its links resolved
	Other   []string `json:"other,omitempty"` // other paths to the same program (hard links, symlinks, copies)
	Dev     uint64   `json:"dev"`
	Ino     uint64   `json:"ino"`
	Size    int64    `json:"size"`
	BuildID string   `json:"buildID,omitempty"` // the ELF build ID, when the file has one
	SHA256  string   `json:"sha256,omitempty"`  // the content's hash, computed only when a copy of the same size was met
	// MultiCall marks a program with many names (see maxAliases): it is
	// known by its rule's name only.
	MultiCall bool `json:"multiCall,omitempty"`

	aliases []string  // its other names no rule has
	keys    []fileKey // the files of Other
	links   uint64    // the file's hard links, itself included
}

// IdentityBudgetError is the search for denied programs cut short by the
// start-up budget: a name it did not reach could run under another name.
type IdentityBudgetError struct {
	Budget  time.Duration
	Stopped string // the directory it was in
}

func (e *IdentityBudgetError) Error() string {
	return fmt.Sprintf("the %s start-up budget ran out while fence was finding the programs command.deny names under other names (in %q), so it cannot recognise a link or a copy it did not reach; "+
		"take the directories of many files off the PATH, or raise filesystem.globBudgetMs (at most %d)",
		e.Budget, e.Stopped, policy.MaxGlobBudgetMs)
}

// fileKey is a file's identity on its filesystem.
type fileKey struct{ dev, ino uint64 }

// contentKey says which content identity a file has been hashed for.
type contentKey struct {
	fileKey
	size  int64
	mtime int64
}

// programs is the table of denied programs of one policy and PATH.
type programs struct {
	dirs   string   // the searched directories, joined: the table's key
	search []string // the PATH's and standard directories, then git's exec-path
	dirent []byte   // scanDir's buffer
	list   []ProgramIdentity
	err    error
	files  map[fileKey]string // every file found to be a denied program -> its name
	sizes  map[int64][]int    // size -> indexes in list
	// aliases are the names in the searched directories that are a
	// denied program under a name no rule has (perl5.36.0 for perl).
	aliases     map[string]string
	aliasNames  []string
	mu          sync.Mutex
	paths       map[string]string // path -> name ("" for none), for preflight of shell lines
	contents    map[contentKey]string
	testOnlyNow func() time.Time
}

// programTables keeps the tables of the last few policies, so that
// preflight, the plan and argv mode of one run find them once.
var programTables struct {
	sync.Mutex
	tables []programTableEntry
}

type programTableEntry struct {
	pol *policy.Policy
	tab *programs
}

// programsFor is the table of p's denied programs for the directories
// dirs (see binDirs), found when first asked for.
func programsFor(p *policy.Policy, dirs []string) *programs {
	key := strings.Join(dirs, "\x00")
	programTables.Lock()
	defer programTables.Unlock()
	for _, e := range programTables.tables {
		if e.pol == p && e.tab.dirs == key {
			return e.tab
		}
	}
	tab := findPrograms(p, dirs, time.Now().Add(Budget(p)))
	tab.dirs = key
	if len(programTables.tables) >= 4 {
		programTables.tables = programTables.tables[1:]
	}
	programTables.tables = append(programTables.tables, programTableEntry{p, tab})
	return tab
}

// processDirs are the directories of this process's PATH and the
// standard ones, as preflight sees them; resolved once per PATH.
func processDirs() []string {
	path := os.Getenv("PATH")
	processPath.Lock()
	defer processPath.Unlock()
	if processPath.dirs == nil || processPath.path != path {
		processPath.path, processPath.dirs = path, binDirs([]string{"PATH=" + path})
	}
	return processPath.dirs
}

var processPath struct {
	sync.Mutex
	path string
	dirs []string
}

// ruleNames are the plain command names deny rules start with. The
// builtin defaults are left out: their commands cannot work in the
// sandbox under any name (no capabilities), and several are one
// multi-call binary (systemctl is reboot, halt and telinit).
func ruleNames(p *policy.Policy) []string {
	var out []string
	for _, r := range p.CommandDeny {
		if len(r.Tokens) > 0 && !r.Builtin && !r.IsGlob(0) && !strings.Contains(r.Tokens[0], "/") && !slices.Contains(out, r.Tokens[0]) {
			out = append(out, r.Tokens[0])
		}
	}
	return out
}

// findPrograms builds the table: the files each rule name denotes, then
// the other names they have in dirs and git's exec-path.
func findPrograms(p *policy.Policy, dirs []string, deadline time.Time) *programs {
	t := &programs{files: map[fileKey]string{}, sizes: map[int64][]int{}, aliases: map[string]string{}, paths: map[string]string{}, contents: map[contentKey]string{}}
	names := ruleNames(p)
	if len(names) == 0 {
		return t
	}
	search := slices.Clone(dirs)
	for _, d := range GitExecPaths {
		if real, err := inputs.EvalSymlinks(d); err == nil && !slices.Contains(search, real) {
			search = append(search, real)
		}
	}
	t.search = search
	for _, name := range names {
		for _, target := range findExecutables(name, search) {
			fi, err := inputs.Stat(target)
			if err != nil {
				continue
			}
			k := keyOf(fi)
			if _, ok := t.files[k]; ok {
				continue
			}
			if isShared(target, name) && filepath.Base(target) != name {
				// A multi-call binary (reboot is systemctl, wget is
				// busybox): its other names are other programs.
				continue
			}
			t.files[k] = name
			t.sizes[fi.Size()] = append(t.sizes[fi.Size()], len(t.list))
			t.list = append(t.list, ProgramIdentity{Name: name, Path: target, Dev: k.dev, Ino: k.ino, Size: fi.Size(), links: hardLinks(fi)})
		}
	}
	if !slices.ContainsFunc(t.list, func(id ProgramIdentity) bool { return id.links > 1 }) {
		return t // no program has another name to look for (git, sudo)
	}
	for _, d := range search {
		if time.Now().After(deadline) {
			inputs.Taint("the search for denied programs ran out of time")
			t.err = &IdentityBudgetError{Budget: Budget(p), Stopped: d}
			return t
		}
		t.scanDir(p, d)
	}
	t.settle()
	return t
}

// entry judges one file of a searched directory: path (named base in
// dir) is file k of the given size, found through a symlink when link is
// set. It is another name of a denied program when it is one of the
// files found, or a copy of one.
func (t *programs) entry(p *policy.Policy, path, base string, k fileKey, size int64, link bool) {
	name, ok := t.files[k]
	if !ok {
		if name = t.copyOf(path, size); name == "" {
			return
		}
		t.files[k] = name
		if link {
			if real, err := inputs.EvalSymlinks(path); err == nil {
				path, link = real, false
			}
		}
	}
	i := slices.IndexFunc(t.list, func(id ProgramIdentity) bool { return id.Name == name })
	id := &t.list[i]
	primary := slices.ContainsFunc(t.list, func(id ProgramIdentity) bool { return id.Path == path })
	if !link && !primary && !slices.Contains(id.Other, path) {
		id.Other = append(id.Other, path)
		id.keys = append(id.keys, k)
	}
	if base != name && !p.CommandNamed(base) && !slices.Contains(id.aliases, base) && t.firstOnPath(base) == filepath.Dir(path) {
		id.aliases = append(id.aliases, base)
	}
}

// firstOnPath is the directory of the searched ones where the command
// name is found first.
func (t *programs) firstOnPath(name string) string {
	for _, d := range t.search {
		if _, err := inputs.Lstat(filepath.Join(d, name)); err == nil {
			return d
		}
	}
	return ""
}

// maxAliases is how many other names a program may have before it is
// taken for one that does the job its name asks for (pyenv's shims,
// which are all one script, or busybox): its other names are other
// programs, and only the rule's name stands for it.
const maxAliases = 4

// settle fills the aliases from the programs found, leaving out the
// multi-call ones.
func (t *programs) settle() {
	for i := range t.list {
		id := &t.list[i]
		if len(id.aliases) > maxAliases {
			for _, k := range id.keys {
				delete(t.files, k)
			}
			id.Other = slices.DeleteFunc(id.Other, func(o string) bool { return filepath.Base(o) != id.Name })
			id.MultiCall, id.aliases, id.keys = true, nil, nil
			continue
		}
		for _, a := range id.aliases {
			if _, ok := t.aliases[a]; !ok {
				t.aliases[a] = id.Name
				t.aliasNames = append(t.aliasNames, a)
			}
		}
	}
	slices.Sort(t.aliasNames)
}

// copyOf is the denied program whose copy the file at path is, or "":
// only a file of the same size is read.
func (t *programs) copyOf(path string, size int64) string {
	if len(t.sizes[size]) == 0 {
		return ""
	}
	f, err := inputs.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	return t.copyOfFile(f, size)
}

func (t *programs) copyOfFile(f *os.File, size int64) string {
	for _, i := range t.sizes[size] {
		id := &t.list[i]
		if !id.MultiCall && t.sameContent(id, f) {
			return id.Name
		}
	}
	return ""
}

// sameContent compares a file with a program of the same size: by build
// ID when the program has one, else by hash.
func (t *programs) sameContent(id *ProgramIdentity, f *os.File) bool {
	if id.BuildID == "" && id.SHA256 == "" {
		own, err := inputs.Open(id.Path)
		if err != nil {
			return false
		}
		id.BuildID = buildIDOf(own)
		if id.BuildID == "" {
			id.SHA256 = sha256Of(own)
		}
		own.Close()
	}
	if id.BuildID != "" {
		return buildIDOf(f) == id.BuildID
	}
	return id.SHA256 != "" && sha256Of(f) == id.SHA256
}

// nameOf is the denied name of the program at path (a file's path, as
// the command gives it, relative to dir), or "". cache keeps the answers
// for paths, for the lines of one run; argv mode, which meets files the
// command made, asks afresh.
func (t *programs) nameOf(dir, path string, cache bool) string {
	if cache {
		t.mu.Lock()
		name, ok := t.paths[path]
		t.mu.Unlock()
		if ok {
			return name
		}
	}
	full := path
	if !filepath.IsAbs(path) && dir != "" {
		full = filepath.Join(dir, path)
	}
	name := t.identify(full)
	if cache {
		t.mu.Lock()
		if len(t.paths) > 4096 {
			clear(t.paths)
		}
		t.paths[path] = name
		t.mu.Unlock()
	}
	return name
}

func (t *programs) identify(path string) string {
	fi, err := inputs.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	k := keyOf(fi)
	t.mu.Lock()
	defer t.mu.Unlock()
	if name, ok := t.files[k]; ok {
		return name
	}
	if _, ok := t.sizes[fi.Size()]; !ok {
		return ""
	}
	ck := contentKey{k, fi.Size(), fi.ModTime().UnixNano()}
	if name, ok := t.contents[ck]; ok {
		return name
	}
	name := t.copyOf(path, fi.Size())
	t.contents[ck] = name
	return name
}

// DeniedProgram is the command name of p's deny rules that the open
// program f is by identity (the file, or a copy of it), or "": for argv
// mode, which judges the file the kernel is about to run whatever its
// name.
func DeniedProgram(p *policy.Policy, f *os.File) string {
	t := programsFor(p, processDirs())
	fi, err := f.Stat()
	if len(t.list) == 0 || err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	k := keyOf(fi)
	t.mu.Lock()
	defer t.mu.Unlock()
	if name, ok := t.files[k]; ok {
		return name
	}
	return t.copyOfFile(f, fi.Size())
}

func keyOf(fi os.FileInfo) fileKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileKey{uint64(st.Dev), uint64(st.Ino)}
	}
	return fileKey{}
}

// BuildID is the GNU build ID of the ELF file at path, in hex; "" when
// it is not an ELF file or has none.
func BuildID(path string) (string, error) {
	f, err := inputs.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return buildIDOf(f), nil
}

func buildIDOf(f *os.File) string {
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		return ""
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return ""
	}
	s := ef.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	return parseBuildIDNote(data, ef.ByteOrder)
}

// parseBuildIDNote reads an NT_GNU_BUILD_ID note: namesz, descsz, type,
// then the name "GNU\0" and the ID, each padded to 4 bytes.
func parseBuildIDNote(data []byte, bo binary.ByteOrder) string {
	const ntGNUBuildID = 3
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		name := 12 + (uint64(namesz)+3)&^3
		end := name + (uint64(descsz)+3)&^3
		if end > uint64(len(data)) || name+uint64(descsz) > uint64(len(data)) {
			return ""
		}
		if typ == ntGNUBuildID && bytes.Equal(bytes.TrimRight(data[12:12+namesz], "\x00"), []byte("GNU")) {
			return hex.EncodeToString(data[name : name+uint64(descsz)])
		}
		data = data[end:]
	}
	return ""
}

func sha256Of(f *os.File) string {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// identityName is the denied name a command name stands for by identity,
// or "": a name no rule has that is another name of a denied program, or
// a path (relative to the policy's directory) to one.
func (t *programs) identityName(p *policy.Policy, name string, cache bool) string {
	if len(t.list) == 0 || name == "" {
		return ""
	}
	if !strings.Contains(name, "/") {
		return t.aliases[name] // none of them is a rule's name
	}
	if p.CommandNamed(name) {
		return ""
	}
	return t.nameOf(p.Dir, name, cache)
}

// identityInText reports whether text holds another name of a denied
// program, or a path to one, as a word: for mayDeny, which looks for the
// rules' own names.
func (t *programs) identityInText(p *policy.Policy, text string, cache bool) bool {
	if len(t.list) == 0 {
		return false
	}
	for _, a := range t.aliasNames {
		if containsWord(text, a) {
			return true
		}
	}
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '/')
		if j < 0 {
			break
		}
		j += i
		start, end := j, j
		for start > 0 && !shellBreak(text[start-1]) {
			start--
		}
		for end < len(text) && !shellBreak(text[end]) {
			end++
		}
		// A path whose name is a rule's is judged by that name anyway:
		// finding it here only parses the line.
		if w := text[start:end]; !strings.ContainsAny(w, "*?[$`") && t.nameOf(p.Dir, w, cache) != "" {
			return true
		}
		i = end
	}
	return false
}

// shellBreak reports whether c ends a word in a shell line.
func shellBreak(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>', '`', '=':
		return true
	}
	return false
}
