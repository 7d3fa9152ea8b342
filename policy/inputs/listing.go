package inputs

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A listing is checked by its directory's stamp (inode, size, link
// count, modification and change times), which every entry made,
// removed or renamed in it moves, at the cost of one stat instead of a
// listing: a directory the plan listed is often large (a PATH directory,
// a tree a glob walks). The stamp is taken before the listing, so a
// change between the two moves it after. A stamp whose times are within
// racyWindow of the moment it was taken is not trusted, since a change in
// the same tick of the file system's clock would leave it as it was; such
// a listing is checked by listing again, as git does with an index entry
// as new as the index.
const racyWindow = 2 * time.Second

// testOnlyNow is the clock racyWindow is measured on.
var testOnlyNow = time.Now

// dirStamp is the stamp of the directory at p, or "" when it cannot be
// trusted (an error, or times within racyWindow of now).
func dirStamp(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return stampOf(fi, testOnlyNow())
}

// stampOf is the stamp of fi as of now, "" when racy.
func stampOf(fi os.FileInfo, now time.Time) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	ctime := changeTime(st)
	newest := fi.ModTime()
	if c := changeTimeOf(st); c.After(newest) {
		newest = c
	}
	if now.Sub(newest) < racyWindow {
		return ""
	}
	return fmt.Sprintf("%o %d:%d %d.%d %d %d %d %s", uint32(fi.Mode()), st.Uid, st.Gid, uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink), fi.Size(), fi.ModTime().UnixNano(), ctime)
}

// listingSeen is what a listing notes: its directory's stamp when that
// can be trusted, else the listing's digest.
func listingSeen(stamp, listing string) string {
	if stamp != "" {
		return "stamp " + stamp
	}
	return "list " + listing
}

var (
	listingMu sync.RWMutex
	listers   = map[string]Checker{}
)

// registerListing names the function that lists a directory for op, a
// listing operation whose notes listingSeen made.
func registerListing(op string, list Checker) {
	listingMu.Lock()
	defer listingMu.Unlock()
	listers[op] = list
}

// checkListing checks a listing observation: by the stamp alone when the
// note holds one, else by listing again.
func checkListing(o Observation) (bool, bool) {
	listingMu.RLock()
	list, ok := listers[o.Op]
	listingMu.RUnlock()
	if !ok {
		return false, false
	}
	if s, ok := strings.CutPrefix(o.Seen, "stamp "); ok {
		fi, err := os.Stat(o.Path)
		return err == nil && stampOf(fi, testOnlyNow()) == s, true
	}
	if l, ok := strings.CutPrefix(o.Seen, "list "); ok {
		return list(o.Path) == l, true
	}
	return false, true
}
