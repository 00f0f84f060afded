package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
)

// DefaultStartTimeout bounds how long a server may take to start and list
// its tools (a package runner may fetch the server first).
const DefaultStartTimeout = time.Minute

// Options configure how the servers are run.
type Options struct {
	// Logger receives the servers' starts, stops and tools that cannot be
	// offered; nil means slog.Default().
	Logger *slog.Logger
	// Stderr receives what stdio servers print on their standard error,
	// each line prefixed with "mcp <server>: "; nil means os.Stderr.
	Stderr io.Writer
	// StartTimeout bounds a server's start and first listing; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
}

// Servers are the MCP servers of one configuration, each a source of tools
// for a tools.Registry. Nothing is started until a tool is needed.
type Servers struct {
	servers []*server
	stop    context.CancelFunc
}

// Open loads the configuration file at path (see Load) and returns its
// servers, none started.
func Open(path string, opts Options) (*Servers, error) {
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	return New(cfg, opts)
}

// New returns the servers of cfg, which it checks first (see
// Config.Validate); none is started.
func New(cfg Config, opts Options) (*Servers, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	opts.Stderr = cmp.Or(opts.Stderr, io.Writer(os.Stderr))
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Servers{stop: cancel}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		if srv := cfg.Servers[name]; !srv.Disabled {
			s.servers = append(s.servers, &server{name: name, prefix: prefix(name), cfg: srv, dir: cfg.Dir, opts: opts, stopping: ctx})
		}
	}
	return s, nil
}

// Names returns the names of the servers, sorted.
func (s *Servers) Names() []string {
	names := make([]string, len(s.servers))
	for i, srv := range s.servers {
		names[i] = srv.name
	}
	return names
}

// Register adds each server to reg as a source of tools named
// mcp__<server>__<tool>. It refuses a server whose tool names could clash
// with tools reg has already.
func (s *Servers) Register(reg *tools.Registry) error {
	for _, srv := range s.servers {
		if err := reg.AddSource(srv); err != nil {
			return fmt.Errorf("mcp server %q: %w", srv.name, err)
		}
	}
	return nil
}

// Close stops the servers that run, all at once; none is started again.
// Stdio servers get their standard input closed, then SIGTERM after 2
// seconds, then SIGKILL.
func (s *Servers) Close() error {
	s.stop()
	errs := make([]error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = srv.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
