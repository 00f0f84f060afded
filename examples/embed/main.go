// Command embed drives a todoflow session from a Go program of your own,
// through package client: it starts a session (or comes back to one), sends
// a message, prints the reply as the model writes it and the checklist as
// it changes, and leaves the session waiting for the next message.
//
//	go run ./worker --dev &
//	go run ./examples/embed --id demo "Plan a small refactor of the auth module"
//	go run ./examples/embed --id demo "Now list the risks"
//
// It connects as the starter does (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE or
// the active profile, else localhost:7233; TODOFLOW_PAYLOAD_KEY when
// payloads are sealed). The session lives on the server: this program can
// stop at any time and come back to it with the same --id.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/todoflow/todoflow/api"

	sdklog "go.temporal.io/sdk/log"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run() error {
	id := flag.String("id", "embed-demo", "the session's workflow `ID`: started when there is none")
	flag.Parse()
	text := strings.TrimSpace(strings.Join(flag.Args(), " "))
	if text == "" {
		return errors.New(`give a message: embed --id ID "what to do"`)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	tc, _, err := agentworker.Dial(ctx, "", "", false, quiet)
	if err != nil {
		return err
	}
	defer tc.Close()
	var opts client.Options
	if sealer, err := codec.FromEnv(); err != nil {
		return err
	} else if sealer != nil {
		opts.DataConverter = sealer.DataConverter() // to read the streamed reply
	}
	c := client.New(tc, opts)

	s, err := c.Attach(ctx, *id)
	if errors.Is(err, client.ErrNoSession) {
		s, err = c.Start(ctx, api.AgentInput{}, client.StartOptions{ID: *id})
	}
	if err != nil {
		return err
	}

	// Watch while the turn runs.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	events := s.Watch(watchCtx, 0)
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		show(events)
	}()

	reply, err := s.Send(ctx, text).Reply(ctx)
	stopWatch()
	<-shown
	if err != nil {
		return err
	}
	fmt.Printf("\n● %s\n", reply)
	return nil
}

// show prints the streamed reply, the checklist and the waits as they
// change, until the watch ends. The transcript's messages (the whole of it
// comes first) are not printed: the reply is, as it is written.
func show(events <-chan client.Event) {
	call, written := 0, 0 // the model call streaming, and how much of its reply is printed
	for ev := range events {
		switch ev := ev.(type) {
		case client.StreamChanged:
			if !ev.Running {
				continue
			}
			if ev.Call != call {
				call, written = ev.Call, 0
			}
			// Text is the reply's end when it is long: Cut bytes come before it.
			if from := written - ev.Cut; from >= 0 && from <= len(ev.Text) {
				fmt.Print(ev.Text[from:])
			}
			written = ev.Cut + len(ev.Text)
		case client.TodosChanged:
			if len(ev.Todos) > 0 {
				fmt.Printf("\n%s\n", todo.Checklist(ev.Todos))
			}
		case client.WaitsChanged:
			for _, w := range ev.Waiting {
				fmt.Printf("\n⏸ %s waits (%s): %s (answer with starter approve or resume)\n", w.AgentID, w.Kind, w.Reason)
			}
		case client.Problem:
			if ev.Err != nil {
				fmt.Fprintln(os.Stderr, "\n!", ev.Err)
			}
		}
	}
}
