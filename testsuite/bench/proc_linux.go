//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times;
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuTime is the CPU time (user and system) process pid has used so far.
func cpuTime(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return ticksOf(pid, f[11:13])
}

// treeCPU is the CPU time process pid and its children have used so far:
// its own, that of its children still running, and that of the children
// it has reaped. PostgreSQL's work is done in a backend process per
// connection, children of its postmaster.
func treeCPU(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	total, err := ticksOf(pid, f[11:15]) // utime, stime, cutime, cstime
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	parent := strconv.Itoa(pid)
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cf, err := statFields(child)
		if err != nil || cf[1] != parent { // gone meanwhile, or not a child
			continue
		}
		if t, err := ticksOf(child, cf[11:15]); err == nil {
			total += t
		}
	}
	return total, nil
}

// statFields are the fields of /proc/PID/stat after the command name (field
// 2, which may hold spaces): state (field 3) is [0], ppid [1], utime (14)
// [11], stime [12], cutime [13], cstime [14].
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, fmt.Errorf("cpu time of process %d: %w", pid, err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 15 {
		return nil, fmt.Errorf("cpu time of process %d: /proc stat has %d fields", pid, len(fields))
	}
	return fields, nil
}

// ticksOf adds up clock-tick fields of process pid's stat.
func ticksOf(pid int, fields []string) (time.Duration, error) {
	var ticks int64
	for _, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time of process %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// rss is the resident set size of process pid, in bytes.
func rss(pid int) (int64, error) { return statusKB(pid, "VmRSS") }

// peakRSS is the largest resident set size process pid has had, in bytes.
func peakRSS(pid int) (int64, error) { return statusKB(pid, "VmHWM") }

// statusKB reads a figure in kB of /proc/PID/status, in bytes.
func statusKB(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("memory of process %d: %w", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("memory of process %d: %q: %w", pid, line, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("memory of process %d: no %s line", pid, key)
}

// loadAverage is the first figure of /proc/loadavg: how busy the machine
// was over the last minute, beside the figures it may have disturbed.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}
