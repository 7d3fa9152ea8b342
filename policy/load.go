package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// MaxExtendsDepth is how many extends steps a chain may take.
const MaxExtendsDepth = 10

// FS reads config files by absolute path. OSFS is the real one; a missing
// file must yield an error that matches fs.ErrNotExist.
type FS interface {
	ReadFile(path string) ([]byte, error)
}

// Options say where Load looks for config.
type Options struct {
	Settings      string // --settings FILE, relative to Dir; overrides discovery
	Template      string // --template NAME; overrides discovery
	Dir           string // absolute working directory
	Home          string // the user's home, for "~/" in extends
	UserConfigDir string // the directory of the user config, such as ~/.config/fence
	FS            FS     // nil means OSFS
}

// Resolved is a loaded and merged policy with where it came from.
type Resolved struct {
	Config Config
	Chain  Chain
	// Files lists every config file that was read, root first, including
	// empty ones: a sandboxed command must not be able to change any of them.
	Files []string
	// Hashes holds the hex SHA-256 of the bytes read from each of Files,
	// the bytes that were parsed, for the trust check (see Trust).
	Hashes map[string]string
	// NoNetwork is set when --no-network emptied the network allowances,
	// so that a refusal names the flag rather than a key to edit.
	NoNetwork bool
	// CredentialFiles are the files of the chain whose
	// network.upstreamProxy carries credentials (KeyUpstreamCredentials).
	CredentialFiles []string

	origins map[string]Origin
}

// Origin says where the list entry value of key (such as
// "filesystem.denyRead") was written. When several files in the chain
// hold it, the one furthest down the chain wins, as in the merge.
func (r *Resolved) Origin(key, value string) (Origin, bool) {
	o, ok := r.origins[key+"\x00"+value]
	return o, ok
}

// Load finds the config (--settings, --template, the nearest project file,
// the user config, or the builtin default, first hit wins), follows its
// extends chain, validates every file and merges them.
func Load(opts Options) (*Resolved, error) {
	if opts.FS == nil {
		opts.FS = OSFS{}
	}
	l := &loader{opts: opts, origins: map[string]Origin{}, hashes: map[string]string{}}
	src, p, err := l.root()
	if err != nil {
		return nil, err
	}
	cfg, chain, err := l.resolve(src, p, nil)
	if err != nil {
		return nil, err
	}
	if err := l.checkUpstream(cfg); err != nil {
		return nil, err
	}
	return &Resolved{Config: cfg, Chain: chain, Files: l.files, CredentialFiles: l.credentialFiles, Hashes: l.hashes, origins: l.origins}, nil
}

type loader struct {
	opts    Options
	files   []string
	hashes  map[string]string
	origins map[string]Origin
	// defaultActionFrom is the file nearest the root that sets
	// network.defaultAction (see noteDefaultAction).
	defaultActionFrom *parsed
	credentialFiles   []string
}

// UserConfigPaths are the files that make up the user config, in the order
// they are tried.
func (o Options) UserConfigPaths() []string {
	return []string{filepath.Join(o.UserConfigDir, "fence.jsonc"), filepath.Join(o.UserConfigDir, "fence.json")}
}

func (l *loader) root() (Source, *parsed, error) {
	switch {
	case l.opts.Settings != "":
		path := l.abs(l.opts.Settings)
		p, err := l.readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return Source{}, nil, fmt.Errorf("settings file %q does not exist", path)
		}
		return l.orDefault(Source{Kind: KindSettings, Path: path}, p, err)
	case l.opts.Template != "":
		p, err := l.template(l.opts.Template)
		return Source{Kind: KindTemplate, Name: l.opts.Template}, p, err
	}
	for dir := l.opts.Dir; ; dir = filepath.Dir(dir) {
		path, p, err := l.firstOf(filepath.Join(dir, "fence.jsonc"), filepath.Join(dir, "fence.json"))
		if p != nil || err != nil {
			return l.orDefault(Source{Kind: KindProject, Path: path}, p, err)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	path, p, err := l.firstOf(l.opts.userConfigFallbacks()...)
	if p == nil && err == nil {
		return Source{Kind: KindDefault, Path: l.opts.UserConfigPaths()[0]}, &parsed{empty: true}, nil
	}
	return l.orDefault(Source{Kind: KindUser, Path: path}, p, err)
}

// orDefault turns an empty root file into the builtin default, which names
// the file it found nothing in.
func (l *loader) orDefault(src Source, p *parsed, err error) (Source, *parsed, error) {
	if err == nil && p.empty {
		src.Kind = KindDefault
	}
	return src, p, err
}

// firstOf reads the first of paths that exists; it returns a nil *parsed
// and no error when none does.
func (l *loader) firstOf(paths ...string) (string, *parsed, error) {
	for _, path := range paths {
		p, err := l.readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return path, p, err
	}
	return "", nil, nil
}

func (l *loader) readFile(path string) (*parsed, error) {
	src, err := l.opts.FS.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	l.files = append(l.files, path)
	l.hashes[path] = HashConfig(src)
	return parseValid(path, src)
}

func (l *loader) template(name string) (*parsed, error) {
	t, ok := LookupTemplate(name)
	if !ok {
		return nil, errors.New(unknownTemplate(name))
	}
	return parseValid("builtin template: "+name, t.Source)
}

func parseValid(file string, src []byte) (*parsed, error) {
	p, err := parse(file, src)
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func (l *loader) abs(path string) string {
	if strings.HasPrefix(path, "~/") {
		return filepath.Join(l.opts.Home, path[2:])
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(l.opts.Dir, path)
}

// resolve merges src over everything it extends. stack holds the sources
// that extend src, for cycle detection.
func (l *loader) resolve(src Source, p *parsed, stack Chain) (Config, Chain, error) {
	stack = append(stack, src)
	l.noteDefaultAction(src, p)
	l.noteUpstreamCredentials(src, p)
	forEachList(&p.cfg, func(key string, values []string) {
		for i, v := range values {
			l.origins[key+"\x00"+v] = Origin{Source: src, Pos: p.pos[fmt.Sprintf("%s[%d]", key, i)]}
		}
	})
	if p.empty || p.cfg.Extends == "" {
		cfg := Merge(Config{}, p.cfg)
		return cfg, Chain{src}, portClash(cfg, p)
	}
	if len(stack) > MaxExtendsDepth {
		return Config{}, nil, p.errorf("extends", "extends chain is deeper than %d steps", MaxExtendsDepth)
	}
	parentSrc, parent, err := l.extends(src, p)
	if err != nil {
		return Config{}, nil, err
	}
	if i := slices.IndexFunc(stack, func(s Source) bool { return s.id() == parentSrc.id() }); i >= 0 {
		return Config{}, nil, p.errorf("extends", "extends cycle: %s", cycleText(append(stack[i:], parentSrc)))
	}
	base, chain, err := l.resolve(parentSrc, parent, stack)
	if err != nil {
		return Config{}, nil, err
	}
	cfg := Merge(base, p.cfg)
	return cfg, append(Chain{src}, chain...), portClash(cfg, p)
}

// extends finds and reads what p extends.
func (l *loader) extends(from Source, p *parsed) (Source, *parsed, error) {
	ref := p.cfg.Extends
	switch {
	case ref == "@base":
		path, parent, err := l.firstOf(l.opts.userConfigFallbacks()...)
		if err != nil {
			return Source{}, nil, err
		}
		if parent == nil || parent.empty {
			if path == "" {
				path = l.opts.UserConfigPaths()[0]
			}
			return Source{Kind: KindBaseDefault, Path: path}, &parsed{empty: true}, nil
		}
		return Source{Kind: KindBaseUser, Path: path}, parent, nil
	case strings.ContainsAny(ref, "/\\") || strings.HasPrefix(ref, "."):
		return l.extendsFile(from, p)
	default:
		if _, ok := LookupTemplate(ref); !ok {
			return Source{}, nil, p.errorf("extends", "%s (a file path must contain \"/\" or start with \".\")", unknownTemplate(ref))
		}
		parent, err := l.template(ref)
		return Source{Kind: KindTemplate, Name: ref}, parent, err
	}
}

func (l *loader) extendsFile(from Source, p *parsed) (Source, *parsed, error) {
	ref := p.cfg.Extends
	if from.Kind == KindTemplate {
		return Source{}, nil, p.errorf("extends", "a builtin template cannot extend a file")
	}
	path := filepath.FromSlash(ref)
	switch {
	case strings.HasPrefix(ref, "~/"):
		path = filepath.Join(l.opts.Home, ref[2:])
	case !filepath.IsAbs(path):
		path = filepath.Join(filepath.Dir(from.Path), path)
	}
	parent, err := l.readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Source{}, nil, p.errorf("extends", "file %q does not exist", path)
	}
	kind := KindFile
	if slices.Contains(l.opts.userConfigFallbacks(), path) {
		kind = KindUser
	}
	return Source{Kind: kind, Path: path}, parent, err
}

func cycleText(c Chain) string {
	parts := make([]string, len(c))
	for i, s := range c {
		parts[i] = s.Label()
	}
	return strings.Join(parts, " -> ")
}
