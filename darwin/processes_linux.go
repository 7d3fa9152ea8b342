package darwin

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// The runner is built on Linux too, so that its tests run there on a
// real terminal (supervise_linux_test.go); only these lookups differ.

// processInfo reads a process's ids, name and whether it is a zombie
// from /proc/PID/stat, whose second field (the name, in parentheses) may
// hold spaces and parentheses.
func processInfo(pid int) (ids procIDs, comm string, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procIDs{}, "", false, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procIDs{}, "", false, false
	}
	var state string
	ids.pid = pid
	if n, _ := fmt.Sscanf(string(b[end+1:]), " %s %d %d %d", &state, &ids.ppid, &ids.pgrp, &ids.sid); n != 4 {
		return procIDs{}, "", false, false
	}
	return ids, string(b[open+1 : end]), state == "Z", true
}

// groupMembers lists the processes of process group pgrp that /proc
// shows.
func groupMembers(pgrp int) ([]procIDs, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	var members []procIDs
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ids, _, _, ok := processInfo(pid); ok && ids.pgrp == pgrp {
			members = append(members, ids)
		}
	}
	return members, true
}
