package agentworker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"
)

// EnvHostQueue names the worker's host queue instead of the name kept in
// its state folder.
const EnvHostQueue = "TODOFLOW_HOST_QUEUE"

// HostQueueFile is the file of the state folder that keeps the name of
// the worker's host queue.
const HostQueueFile = "host-queue"

// HostQueue is the host queue of a worker whose state folder is stateDir:
// name when it is not empty, else $TODOFLOW_HOST_QUEUE, else the name kept
// in stateDir/host-queue, which the first worker of that folder makes
// ("todoflow-host-<hostname>-<8 hex digits>") and every later one reads.
//
// The name lives beside the workspaces on purpose: a worker restarted with
// the same state folder polls the same queue and finds the same files, and
// several workers that share one state folder (a shared volume) share its
// queue too, as they share its files.
func HostQueue(stateDir, name string) (string, error) {
	source := "the host queue"
	if name == "" {
		name, source = os.Getenv(EnvHostQueue), EnvHostQueue
	}
	if name != "" {
		if err := api.CheckHostQueue(name); err != nil {
			return "", fmt.Errorf("%s %w", source, err)
		}
		return name, nil
	}
	path := filepath.Join(stateDir, HostQueueFile)
	if name, err := readHostQueue(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return name, err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return "", fmt.Errorf("host queue: %w", err)
	}
	// Written aside and linked into place, so that two workers starting on
	// one state folder agree on the name: the second link fails, and that
	// worker reads the first one's.
	tmp, err := os.CreateTemp(stateDir, HostQueueFile+".*")
	if err != nil {
		return "", fmt.Errorf("host queue: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(newHostQueue() + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("host queue: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("host queue: %w", err)
	}
	return readHostQueue(path)
}

// readHostQueue reads the name kept in a state folder.
func readHostQueue(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("host queue: %w", err)
	}
	name := strings.TrimSpace(string(data))
	if err := api.CheckHostQueue(name); err != nil {
		return "", fmt.Errorf("host queue in %s %w (write a valid name there, or remove the file to get a new one)", path, err)
	}
	return name, nil
}

// newHostQueue makes a name that no other worker has: the machine's name,
// for the people reading it, and random digits, for two state folders on
// one machine.
func newHostQueue() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if text.IsAlnum(r) || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, host)
	if len(host) > 63 {
		host = host[:63]
	}
	if host == "" {
		host = "host"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "todoflow-host-" + host + "-" + hex.EncodeToString(b[:])
}
