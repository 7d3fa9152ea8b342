package policy

import (
	"fmt"
	"strings"
)

// SourceKind says how a link of the resolution chain was found.
type SourceKind string

// The kinds of Source. The first five start a chain; the rest are reached
// through extends (KindTemplate and KindUser can be either).
const (
	KindProject     SourceKind = "project"      // nearest fence.jsonc or fence.json above the working directory
	KindUser        SourceKind = "user"         // the user config file
	KindSettings    SourceKind = "settings"     // named with --settings
	KindTemplate    SourceKind = "template"     // a builtin template
	KindDefault     SourceKind = "default"      // nothing loaded: the builtin default
	KindFile        SourceKind = "file"         // extends "./path"
	KindBaseUser    SourceKind = "base-user"    // extends "@base", user config found
	KindBaseDefault SourceKind = "base-default" // extends "@base", no user config
)

// Source is one link of the resolution chain. Path is set for files and for
// the default kinds (where it names the file that was looked for); Name is
// set for templates.
type Source struct {
	Kind SourceKind `json:"kind"`
	Path string     `json:"path,omitempty"`
	Name string     `json:"name,omitempty"`
	// Flags are the policy flags of a KindCommandLine source, as given,
	// separated by spaces.
	Flags string `json:"flags,omitempty"`
}

// Label is how the source reads in the printed chain.
func (s Source) Label() string {
	switch s.Kind {
	case KindProject:
		return "project config: " + s.Path
	case KindUser:
		return "user config: " + s.Path
	case KindSettings:
		return "settings file: " + s.Path
	case KindTemplate:
		return "builtin template: " + s.Name
	case KindDefault:
		return "builtin default (no config loaded from " + s.Path + ")"
	case KindFile:
		return "file: " + s.Path
	case KindBaseUser:
		return "@base user config: " + s.Path
	case KindCommandLine:
		if s.Flags != "" {
			return "command line: " + s.Flags
		}
		return "command line"
	case KindBaseDefault:
		return "@base builtin default (no config loaded from " + s.Path + ")"
	}
	return string(s.Kind) + ": " + s.Path + s.Name
}

// id identifies the source for cycle detection: a file is the same file
// however it was reached.
func (s Source) id() string {
	if s.Kind == KindTemplate {
		return "template " + s.Name
	}
	return "file " + s.Path
}

// Chain is the resolution chain, the root config first and each config it
// extends after it.
type Chain []Source

// Named is the chain as the configs name it: each file and template a
// config names, and not the steps by which a builtin template builds on
// others (code on ci, ci on workspace-write...), which are part of it.
// Tools that read the printed chain expect one line per source a user
// wrote down.
func (c Chain) Named() Chain {
	for i, s := range c {
		if s.Kind == KindTemplate {
			return c[:i+1]
		}
	}
	return c
}

// String renders the chain, every step of it, as `fence config show`
// prints it on stderr, ending with an empty line.
func (c Chain) String() string {
	var b strings.Builder
	b.WriteString("Active config chain:\n")
	for i, s := range c {
		if i > 0 {
			b.WriteString(strings.Repeat("    ", i-1) + "└── ")
		}
		b.WriteString(s.Label() + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

// Origin is where a rule was written: its source and, for files and
// templates, the position of the value.
type Origin struct {
	Source Source
	Pos    Pos
}

func (o Origin) String() string {
	if o.Pos.Line == 0 {
		return o.Source.Label()
	}
	return fmt.Sprintf("%s:%d:%d", o.Source.Label(), o.Pos.Line, o.Pos.Col)
}
