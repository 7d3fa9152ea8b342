// Command execforms runs a program by the forms of exec that do not name
// it by path, for fence's argv-mode tests, and times execs for its
// benchmark:
//
//	execforms fd PATH ARGS...      execveat(open(PATH), "", AT_EMPTY_PATH)
//	execforms procfd PATH ARGS...  execve("/proc/self/fd/N") of open(PATH)
//	execforms memfd PATH ARGS...   execveat of a memfd holding a copy of PATH
//	execforms dirfd DIR NAME ARGS...  execveat(open(DIR), NAME, 0)
//	execforms bench N PATH ARGS... exec PATH N times, each failing, print ns/exec
//	execforms race N               N times, exec /bin/echo public while another
//	                               thread rewrites "public" to "secret"; print
//	                               how often echo said secret
//
// argv[0] of the fd forms is "prog", so that only the file tells what
// runs. A refused exec prints "error: " and the errno's text, and exits 0.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: execforms fd|procfd|memfd PATH ARGS..., dirfd DIR NAME ARGS..., or bench N PATH")
		os.Exit(2)
	}
	mode, target := os.Args[1], os.Args[2]
	argv := append([]string{"prog"}, os.Args[3:]...)
	var err error
	switch mode {
	case "fd", "procfd":
		var fd int
		if fd, err = unix.Open(target, unix.O_RDONLY, 0); err == nil {
			if mode == "fd" {
				err = execveat(fd, "", argv, unix.AT_EMPTY_PATH)
			} else {
				err = unix.Exec(fmt.Sprintf("/proc/self/fd/%d", fd), argv, os.Environ())
			}
		}
	case "memfd":
		err = execMemfd(target, argv)
	case "dirfd":
		var fd int
		if fd, err = unix.Open(target, unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil && len(os.Args) > 3 {
			err = execveat(fd, os.Args[3], append([]string{"prog"}, os.Args[4:]...), 0)
		}
	case "bench":
		err = bench(target, os.Args[3:])
	case "race":
		err = race(target)
	case "racer":
		err = racer()
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Println("error:", err)
	}
}

func execMemfd(path string, argv []string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	fd, err := unix.MemfdCreate(filepath.Base(path), 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(os.NewFile(uintptr(fd), "memfd"), src); err != nil {
		return err
	}
	return execveat(fd, "", argv, unix.AT_EMPTY_PATH)
}

func execveat(dirfd int, path string, argv []string, flags int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	av, err := cStrings(argv)
	if err != nil {
		return err
	}
	ev, err := cStrings(os.Environ())
	if err != nil {
		return err
	}
	_, _, e := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&av[0])), uintptr(unsafe.Pointer(&ev[0])), uintptr(flags), 0)
	return e
}

// cStrings is ss as a NULL-terminated array of C strings.
func cStrings(ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// bench execs argv[0] with argv n times, each exec failing (a path
// that does not exist, a missing interpreter, or refused), and prints
// the mean time of one call in ns: no fork, so that what an exec costs
// in the supervisor is not lost in what a process costs.
func bench(count string, argv []string) error {
	n, err := strconv.Atoi(count)
	if err != nil || len(argv) == 0 {
		return fmt.Errorf("bench N PATH: %v", err)
	}
	env := os.Environ()
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := unix.Exec(argv[0], argv, env); err == nil {
			return fmt.Errorf("exec %s succeeded", argv[0])
		}
	}
	fmt.Printf("%d ns/exec\n", time.Since(start).Nanoseconds()/int64(n))
	return nil
}

// race runs racer n times and counts the runs in which echo printed
// the word it was not started with.
func race(count string) error {
	n, err := strconv.Atoi(count)
	if err != nil {
		return err
	}
	won := 0
	for i := 0; i < n; i++ {
		out, _ := exec.Command("/proc/self/exe", "racer", "x").CombinedOutput()
		if strings.Contains(string(out), "secret") {
			won++
		}
	}
	fmt.Printf("%d of %d execs ran the rewritten argv\n", won, n)
	return nil
}

// racer execs /bin/echo public while another thread writes "secret"
// and "public" into that argument's memory, over and over.
func racer() error {
	word := []byte("public\x00")
	argv := []*byte{&word[0], &word[0], nil}
	word0, _ := unix.BytePtrFromString("/bin/echo")
	argv[0] = word0
	env, _ := cStrings(os.Environ())
	go func() {
		for {
			copy(word, "secret")
			copy(word, "public")
		}
	}()
	_, _, e := unix.Syscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(word0)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&env[0])))
	return e
}
