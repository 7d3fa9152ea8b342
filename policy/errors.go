package policy

import (
	"bytes"
	"fmt"
)

// Pos is a 1-based line and column in a config file.
type Pos struct {
	Line, Col int
}

func posAt(src []byte, offset int) Pos {
	if offset > len(src) {
		offset = len(src)
	}
	before := src[:offset]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return Pos{Line: line, Col: col}
}

// FileError is a problem at a place in a config file. Its message names the
// file, line and column, the key, and what was expected, so that a person or
// an agent can fix the file without reading fence's source.
type FileError struct {
	File string // path, or "builtin template: NAME"
	Pos  Pos    // zero when the problem is the whole file
	Key  string // dotted key path such as "network.allowedDomains[2]"; may be empty
	Msg  string
}

func (e *FileError) Error() string {
	loc := e.File
	if e.Pos.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Pos.Line, e.Pos.Col)
	}
	if e.Key == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Key + ": " + e.Msg
}
