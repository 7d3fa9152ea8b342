package inputs

import (
	"strconv"
	"syscall"
	"time"
)

// changeTime is a file's change time in nanoseconds, as text.
func changeTime(st *syscall.Stat_t) string {
	return strconv.FormatInt(st.Ctim.Sec*1e9+st.Ctim.Nsec, 10)
}

// changeTimeOf is a file's change time.
func changeTimeOf(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
}
