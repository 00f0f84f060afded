//go:build !linux

package main

import (
	"errors"
	"time"
)

var errNoProc = errors.New("process CPU time and memory are read from /proc, which only Linux has")

func cpuTime(int) (time.Duration, error) { return 0, errNoProc }
func treeCPU(int) (time.Duration, error) { return 0, errNoProc }
func rss(int) (int64, error)             { return 0, errNoProc }
func peakRSS(int) (int64, error)         { return 0, errNoProc }
func loadAverage() string                { return "unknown" }
