package sandbox

import (
	"fmt"
	"os"
	"slices"
)

// ExtraFiles lays out files for exec.Cmd.ExtraFiles, which hands its i-th
// entry to the child as descriptor i+3, so that each kept descriptor
// keeps its number in the child: keep maps that number to the file.
func ExtraFiles(keep map[int]*os.File) []*os.File {
	maxFD := 2
	for n := range keep {
		maxFD = max(maxFD, n)
	}
	out := make([]*os.File, maxFD-2)
	for n, f := range keep {
		out[n-3] = f
	}
	return out
}

// CheckKeepFDs refuses descriptors --keep-fd cannot pass: 0-2 (always
// passed), duplicates, and numbers that are not open.
func CheckKeepFDs(fds []int, isOpen func(int) bool) error {
	for i, n := range fds {
		switch {
		case n < 3:
			return fmt.Errorf("--keep-fd %d: descriptors 0, 1 and 2 always reach the command", n)
		case n > 1<<16:
			return fmt.Errorf("--keep-fd %d: too large", n)
		case slices.Contains(fds[:i], n):
			return fmt.Errorf("--keep-fd %d given twice", n)
		case !isOpen(n):
			return fmt.Errorf("--keep-fd %d: fence has no open descriptor %d to pass on", n, n)
		}
	}
	return nil
}
