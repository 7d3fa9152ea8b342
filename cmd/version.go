package cmd

import (
	"fmt"
	"runtime/debug"
)

// version reports the module version and the commit fence was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	v := info.Main.Version
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return fmt.Sprintf("%s (%s)", v, info.GoVersion)
	}
	return fmt.Sprintf("%s (commit %s%s, %s)", v, rev, dirty, info.GoVersion)
}
