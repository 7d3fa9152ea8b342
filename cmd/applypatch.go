package cmd

import (
	"errors"
	"fmt"
	"strings"
)

// Codex's apply_patch format, as its apply_patch documentation gives it:
//
//	*** Begin Patch
//	*** Add File: PATH        (then lines of "+text")
//	*** Delete File: PATH
//	*** Update File: PATH
//	*** Move to: PATH         (optional, right after Update File)
//	@@ context / " ", "-", "+" lines / *** End of File
//	*** End Patch
//
// Codex reads it leniently: markers may carry spaces around them, and the
// whole patch may come wrapped in a <<EOF ... EOF here-document. fence
// reads it to find every file the patch touches, and errs towards more:
// any line that reads as a file header, wherever it stands, names a file
// fence judges, and a line that starts like a header fence does not know
// refuses the patch, as Codex itself would.

// patchHeaders are the header markers that name a file, lower-cased.
var patchHeaders = []string{"*** add file: ", "*** delete file: ", "*** update file: ", "*** move to: "}

// patchPaths are the paths of every file the patch adds, deletes, updates
// or moves (from and to), in order; an error says why the text is not a
// patch fence can read.
func patchPaths(patch string) ([]string, error) {
	lines := strings.Split(strings.TrimSpace(patch), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	if n := len(lines); n >= 4 && isHeredocStart(lines[0]) && strings.HasSuffix(lines[n-1], "EOF") {
		lines = lines[1 : n-1]
	}
	n := len(lines)
	if n < 2 || strings.TrimSpace(lines[0]) != "*** Begin Patch" {
		return nil, errors.New("it does not start with *** Begin Patch")
	}
	if strings.TrimSpace(lines[n-1]) != "*** End Patch" {
		return nil, errors.New("it does not end with *** End Patch")
	}
	var paths []string
	for i, raw := range lines[1 : n-1] {
		p, ok, err := patchHeaderPath(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		if ok {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, errors.New("it names no file")
	}
	return paths, nil
}

// isHeredocStart reports whether line opens the here-document Codex
// accepts around a patch.
func isHeredocStart(line string) bool {
	return line == "<<EOF" || line == "<<'EOF'" || line == `<<"EOF"`
}

// patchHeaderPath is the path a patch line names as a file header, and
// whether it is one. A line starting with "*" that is no header fence
// knows is an error.
func patchHeaderPath(raw string) (string, bool, error) {
	line := strings.TrimSpace(raw)
	lower := strings.ToLower(line)
	for _, h := range patchHeaders {
		if strings.HasPrefix(lower, h) {
			if p := line[len(h):]; p != "" {
				return p, true, nil
			}
			return "", false, fmt.Errorf("%q names no file", line)
		}
	}
	if strings.HasPrefix(raw, "*") {
		if line == "*** End of File" {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%q is not a patch header fence knows", line)
	}
	return "", false, nil
}
