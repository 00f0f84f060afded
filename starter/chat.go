package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/chat"
	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
	"github.com/todoflow/todoflow/worker/devserver"
)

// cmdChat is the terminal client (package chat). Without an address it
// talks to the server of the state database, where sessions outlive it:
// a running `worker --dev`, or the embedded server started on that
// database (on worker --dev's ports when they are free) with an
// in-process worker, both stopped when the client leaves.
func cmdChat(c *cmdline) action {
	runID := c.runID("the session's workflow `ID`: attach to it, or start it with your first message when there is none (default: a new chat-<uuid>)")
	modelRef := c.fs.String("model", "", "a new session's model `REF`erence, e.g. openai:gpt-4o-mini or script:FILE (default: the worker's)")
	return func([]string) error {
		id, err := runID()
		if err != nil {
			return err
		}
		return runChat(c, id, *modelRef)
	}
}

// runChat is `starter chat` once its flags are read.
func runChat(c *cmdline, id, modelRef string) error {
	// A malformed reference is a bad argument whichever worker serves the
	// session (exit 2), said before anything is dialled or started.
	if err := api.CheckModel(modelRef); err != nil {
		return badInput(fmt.Errorf("--model %s: %w", modelRef, err))
	}
	var dc converter.DataConverter
	if sealer, err := codec.FromEnv(); err != nil {
		return err
	} else if sealer != nil {
		dc = sealer.DataConverter()
	}
	// The terminal is the chat's: what the SDK, the embedded server and
	// the in-process worker log goes to a file.
	logw, logPath, err := openChatLog()
	if err != nil {
		return err
	}
	defer logw.Close()
	defer logTo(logw)()
	c.conn.log = logw

	ctx, stop := interruptible()
	defer stop()
	prices, err := chatPrices()
	if err != nil {
		return err
	}
	o := chat.Options{ID: id, Model: modelRef, Prices: prices}
	var cl client.Client
	if c.conn.address == "" && os.Getenv("TEMPORAL_ADDRESS") == "" {
		// With no model to talk to, a new session plays the scripted demo,
		// as `starter run` does: the in-process worker serves it.
		var demo *chatDemo
		scriptDir := scriptDirOf(modelRef)
		if modelRef == "" && !modelConfigured() {
			if demo, err = writeChatDemo(); err != nil {
				return err
			}
			scriptDir = filepath.Dir(demo.path)
		}
		var srv *chatServed
		if srv, err = chatServer(ctx, &c.conn, scriptDir, logw, logPath); err != nil {
			return err
		}
		defer srv.shutdown()
		cl, o.Notes, o.ServerStops = srv.cl, srv.notes, srv.worker
		if srv.worker {
			// Asked of the resolver the worker uses, before a session is
			// started: one on a model the worker cannot serve fails (at
			// its start, or at its first message with no API key).
			if modelRef != "" {
				if _, _, err := agentworker.NewModels("", scriptDir)(modelRef); err != nil {
					return badInput(fmt.Errorf("--model %s: %w", modelRef, err))
				}
			}
			if demo != nil {
				o.Model, o.Prompt = "script:"+demo.path, demo.prompt
				o.Notes = append(o.Notes, "No model is configured (OPENAI_API_KEY and OPENAI_BASE_URL are unset), so this worker answers "+
					"scripted sessions only: a new session plays the demo, written in advance, whatever you type. "+
					"Set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) for a model.")
			}
		}
	} else if cl, err = c.conn.dialReady(ctx); err != nil {
		return err
	} else {
		defer cl.Close()
	}
	o.Client = tfclient.New(cl, tfclient.Options{TaskQueue: c.conn.taskQueue, DataConverter: dc, Namespace: c.conn.namespace,
		Address: cmp.Or(c.conn.address, os.Getenv("TEMPORAL_ADDRESS"))})
	err = chat.Run(ctx, o)
	if _, ok := errors.AsType[*chat.EndedError](err); ok {
		// The chat has shown why; the exit code tells a script.
		return &exitError{code: 1}
	}
	return err
}

// chatServed is the server a chat talks to, found or started by
// chatServer.
type chatServed struct {
	cl       client.Client
	notes    []string
	worker   bool // an in-process worker serves it (not a `worker --dev`)
	shutdown func()
}

// chatServer connects to the server of the state database: `worker --dev`'s
// when it runs (it holds the database), else the embedded server started
// here on it, served by an in-process worker. The server's output, its
// progress and the worker's log go to logw (at logPath), never to the
// terminal, which the chat draws on.
func chatServer(ctx context.Context, c *conn, scriptDir string, logw io.Writer, logPath string) (*chatServed, error) {
	db, err := agentworker.ServerDB()
	if err != nil {
		return nil, err
	}
	// Said before the chat starts: building the server's binary may take a
	// while the first time.
	fmt.Fprintf(os.Stderr, "todoflow: starting the embedded Temporal server (database %s, log %s)\n", db, logPath)
	opts := devserver.Options{Port: 7233, UIPort: 8233, DBFile: db, SearchAttributes: api.SearchAttributes(), Log: logw, Progress: logw}
	srv, err := devserver.Start(ctx, opts)
	if errors.Is(err, devserver.ErrPortInUse) {
		opts.Port, opts.UIPort = 0, 0
		srv, err = devserver.Start(ctx, opts)
	}
	if errors.Is(err, devserver.ErrDBInUse) {
		// Most likely `worker --dev`, which serves the database on 7233.
		c.address = client.DefaultHostPort
		cl, err := c.dialReady(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s is in use by another process, and no `worker --dev` answers on %s (%w); "+
				"stop the other `starter run` or `starter chat`, or give --address", db, client.DefaultHostPort, err)
		}
		return &chatServed{cl: cl, notes: []string{"Using the `worker --dev` server on " + client.DefaultHostPort + "."}, shutdown: cl.Close}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("start the embedded Temporal server: %w", err)
	}
	cl, shutdown, err := c.serveLocal(ctx, srv, agentworker.Options{TaskQueue: c.taskQueue, ScriptDir: scriptDir, Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("Embedded server at %s (Web UI http://%s) with a worker, until this client leaves; "+
		"`go run ./worker --dev` keeps sessions working without it. Their log: %s", srv.Address(), srv.UIAddress(), logPath)}
	return &chatServed{cl: cl, notes: notes, worker: true, shutdown: shutdown}, nil
}

// chatLogMax is the size past which a chat's log starts afresh (the one
// before kept as chat.log.1): a log kept for looking into the last
// sessions, not an archive.
const chatLogMax = 8 << 20

// openChatLog opens <state folder>/chat.log to append to.
func openChatLog() (*os.File, string, error) {
	dir, err := agentworker.StateDir()
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("create the state folder: %w", err)
	}
	path := filepath.Join(dir, "chat.log")
	if fi, err := os.Stat(path); err == nil && fi.Size() > chatLogMax {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("open the chat's log: %w", err)
	}
	return f, path, nil
}

// logTo makes w the process's default log (slog's and log's: the
// reporters and the MCP servers' notes use it) and returns what puts the
// previous one back.
func logTo(w io.Writer) (restore func()) {
	prev, prevOut, prevFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})))
	slog.Info("starter chat", "pid", os.Getpid(), "args", strings.Join(os.Args[1:], " "))
	return func() {
		slog.SetDefault(prev)
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
	}
}

// chatDemo is the scripted session a chat plays with no model: the demo
// of `starter run`, then one reply to whatever the user types after it.
type chatDemo struct {
	path   string // the scenario file, in the state folder's demo/
	prompt string // the first message, sent as the session starts
}

// demoEnd answers every message typed after the demo (the script's
// "then"): the script has nothing else to say, and a message answered with
// nothing would leave the user waiting for a reply.
const demoEnd = "This session is the scripted demo, so no model reads what you type. Set OPENAI_API_KEY " +
	"(or OPENAI_BASE_URL for a local server) and run `starter chat` again to talk to one; this session stays as it is."

func writeChatDemo() (*chatDemo, error) {
	var sc struct {
		Name  string `json:"name"`
		Input struct {
			Prompt string `json:"prompt"`
		} `json:"input"`
		Model []json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(demo, &sc); err != nil {
		return nil, fmt.Errorf("the shipped demo: %w", err)
	}
	end, err := json.Marshal(map[string]string{"content": demoEnd})
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(map[string]any{"name": "chat " + sc.Name, "model": sc.Model, "then": json.RawMessage(end)}, "", "  ")
	if err != nil {
		return nil, err
	}
	path, err := writeDemo("chat-demo.json", "the chat demo", data)
	if err != nil {
		return nil, err
	}
	return &chatDemo{path: path, prompt: sc.Input.Prompt}, nil
}

// scriptDirOf is the folder of a script: model's scenario file, which the
// in-process worker serves script: models from; "" for any other model.
func scriptDirOf(ref string) string {
	path, ok := strings.CutPrefix(ref, "script:")
	if !ok || path == "" {
		return ""
	}
	if i := strings.LastIndex(path, "#"); i >= 0 {
		path = path[:i]
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}

// chatPrices reads the price table the chat's status line prices tokens
// with: the file TODOFLOW_PRICES names, else prices.json in the state
// folder (none is no table).
func chatPrices() (chat.Prices, error) {
	path := os.Getenv(chat.EnvPrices)
	if path == "" {
		dir, err := agentworker.StateDir()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, "prices.json")
	}
	return chat.LoadPrices(path)
}
