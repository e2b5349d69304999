package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// sandboxProcess is the sandbox's first process (the launcher, PID 1
// inside) as the host sees it: its PID and its start time, which tell it
// from a later process given the same PID.
type sandboxProcess struct {
	pid   int
	start string
}

// readInfo reads bubblewrap's --info-fd JSON ({"child-pid": …}) and notes
// the process's start time.
func readInfo(r io.Reader) sandboxProcess {
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if json.NewDecoder(io.LimitReader(r, 4096)).Decode(&info) != nil || info.ChildPID <= 0 {
		return sandboxProcess{}
	}
	_, start, ok := procStat(info.ChildPID)
	if !ok {
		return sandboxProcess{}
	}
	return sandboxProcess{pid: info.ChildPID, start: start}
}

// waitGone waits, up to max, until the process has ended. The sandbox's
// PID 1 ends only after every other process of its PID namespace: when
// bubblewrap is killed at the wall-clock limit, the sandbox dies after it,
// and Run returns only once nothing of the cell runs.
func (p sandboxProcess) waitGone(max time.Duration) {
	if p.pid <= 0 {
		return
	}
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		state, start, ok := procStat(p.pid)
		if !ok || start != p.start || state == "Z" || state == "X" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procStat reads a process's state and start time from /proc/PID/stat.
func procStat(pid int) (state, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}
	// pid (comm) state … : comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", "", false
	}
	return f[0], f[19], true // fields 3 and 22 of proc(5)
}
