package darwin

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// szomb is a zombie's p_stat (sys/proc.h).
const szomb = 5

// processInfo reads a process's ids, name (p_comm) and whether it is a
// zombie, with sysctl kern.proc.pid, which shows zombies too.
func processInfo(pid int) (ids procIDs, comm string, zombie, ok bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return procIDs{}, "", false, false
	}
	return idsOf(kp), commOf(kp), kp.Proc.P_stat == szomb, true
}

func idsOf(kp *unix.KinfoProc) procIDs {
	ids := procIDs{pid: int(kp.Proc.P_pid), ppid: int(kp.Eproc.Ppid), pgrp: int(kp.Eproc.Pgid)}
	if sid, err := unix.Getsid(ids.pid); err == nil {
		ids.sid = sid
	}
	return ids
}

func commOf(kp *unix.KinfoProc) string {
	name := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return string(name)
}

// groupMembers lists the processes of process group pgrp (sysctl
// kern.proc.pgrp).
func groupMembers(pgrp int) ([]procIDs, bool) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgrp)
	if err != nil {
		return nil, false
	}
	members := make([]procIDs, 0, len(kps))
	for i := range kps {
		members = append(members, idsOf(&kps[i]))
	}
	return members, true
}
