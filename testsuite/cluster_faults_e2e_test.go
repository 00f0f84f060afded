package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
)

// TestClusterSessionsSurviveFaults runs three kinds of session at once on the cluster,
// served by two workers with state folders of their own, and SIGKILLs one part of the
// cluster while they run: the history service, the matching service (each started again
// a few seconds later) or PostgreSQL itself (restarted at once, as a supervisor would).
// The sessions are
//
//   - plan: scenario 05 (a plan that waits for approval), started and approved with the
//     stock `temporal` CLI, as an operator would;
//   - chat: scenario 08, a chat of four turns that continues as new (the cluster suggests
//     it after 30 events, as the recording server does);
//   - tree: scenario 06e, a subagent whose step waits on its parent's.
//
// Every model call takes a while, so that the kill finds each session in the middle of
// its run. Each session must end as its scenario expects, with the same transcript as in
// the run without a fault (the first subtest): the list, the plan, every message sent and
// every answer are there. The test logs, per fault and session, how long the session took
// from the service's restart to its next step.
func TestClusterSessionsSurviveFaults(t *testing.T) {
	cl := startCluster(t, "limit.historyCount.suggestContinueAsNew=30")
	c := cl.dial(t)
	s := &server{c: c}
	for range 2 {
		s.startWorkerWith(t, agentworker.Options{StateDir: t.TempDir(), ScriptDir: "/"})
	}

	var baseline map[string][]string // kind → the transcript of the run without a fault
	for _, fault := range []struct {
		service string
		down    time.Duration // between the kill and the restart
	}{
		{"", 0},
		{"history", 4 * time.Second},
		{"matching", 4 * time.Second},
		{"postgres", 0},
	} {
		name := fault.service
		if name == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			sessions := startFaultSessions(t, cl, c, name)
			if fault.service != "" {
				injectFault(t, cl, c, sessions, fault.service, fault.down)
			}
			transcripts := map[string][]string{}
			for _, fs := range sessions {
				res := <-fs.done
				if res.err != nil {
					t.Errorf("%s (%s): %v", fs.kind, fs.id, res.err)
					continue
				}
				t.Run(fs.kind, func(t *testing.T) { checkExpect(t, fs.sc, res.out) })
				transcripts[fs.kind] = fs.check(t, c, res.out)
			}
			if t.Failed() {
				return
			}
			if baseline == nil {
				baseline = transcripts
				return
			}
			for kind, want := range baseline {
				if got := transcripts[kind]; !slices.Equal(got, want) {
					t.Errorf("%s: the transcript differs from the run without a fault:\n%s", kind, lineDiff(got, want))
				}
			}
		})
	}
}

// faultSession is one session of TestClusterSessionsSurviveFaults.
type faultSession struct {
	kind string
	id   string
	sc   *scenario.Scenario
	done <-chan played
}

// startFaultSessions starts the plan, chat and tree sessions, every model call of them
// 1.5 s long.
func startFaultSessions(t *testing.T, cl *cluster, c client.Client, tag string) []*faultSession {
	t.Helper()
	slow := func(m map[string]any) {
		responses := m["model"].([]any)
		if agents, ok := m["agents"].(map[string]any); ok {
			for _, list := range agents {
				responses = append(responses, list.([]any)...)
			}
		}
		for _, r := range responses {
			r.(map[string]any)["delay_ms"] = 1500
		}
	}
	stamp := time.Now().Format("150405.000")
	var sessions []*faultSession
	for _, k := range []struct{ kind, file string }{
		{"plan", "05_plan_with_approval.json"},
		{"chat", "08_chat_continue_as_new.json"},
		{"tree", "06e_child_depends_on_parent.json"},
	} {
		fs := &faultSession{kind: k.kind, id: fmt.Sprintf("cluster-%s-%s-%s", tag, k.kind, stamp), sc: scenarioVariant(t, k.file, slow)}
		if k.kind == "plan" {
			fs.done = cl.playCLI(t, c, fs.sc, fs.id, 3*time.Minute, nil)
		} else {
			fs.done = playAsync(t, c, fs.sc, fs.id, 3*time.Minute)
		}
		sessions = append(sessions, fs)
	}
	return sessions
}

// injectFault waits until every session is in the middle of its run (three model calls
// made, not ended), SIGKILLs service, starts it again after down, and logs how long each
// session took from then to its next step.
func injectFault(t *testing.T, cl *cluster, c client.Client, sessions []*faultSession, service string, down time.Duration) {
	t.Helper()
	before := map[string]api.State{}
	waitFor(t, time.Minute, "every session in the middle of its run", func() bool {
		for _, fs := range sessions {
			st, ok := queryState(context.Background(), c, fs.id)
			if !ok || st.ModelCalls < 3 || st.Status == api.StatusCompleted {
				return false
			}
			before[fs.kind] = st
		}
		return true
	})
	inFlight := map[string]string{}
	for _, fs := range sessions {
		if modelCallRunning(c, fs.id) {
			inFlight[fs.kind] = ", a model call in flight"
		}
	}
	// Their state just before the kill, which the next step differs from.
	var at []string
	for _, fs := range sessions {
		if st, ok := queryState(context.Background(), c, fs.id); ok {
			before[fs.kind] = st
		}
		st := before[fs.kind]
		at = append(at, fmt.Sprintf("%s %s (turn %d, %d model calls%s)", fs.kind, st.Status, st.Turns, st.ModelCalls, inFlight[fs.kind]))
	}
	killed := time.Now()
	cl.kill(t, service)
	t.Logf("%s killed (SIGKILL); the sessions then: %s", service, strings.Join(at, "; "))
	time.Sleep(down)
	restart := time.Now()
	if out, err := cl.run(context.Background(), t, "restart", service); err != nil {
		t.Fatalf("cluster.sh restart %s: %v\n%s", service, err, out)
	}
	up := time.Now()

	// The next step: a state that differs from the one seen before the kill.
	step := func(st api.State) string {
		return fmt.Sprintf("%s/%d/%d/%d", st.Status, st.Turns, st.ModelCalls, st.EventsTotal)
	}
	var mu sync.Mutex
	next := map[string]time.Duration{}
	var wg sync.WaitGroup
	for _, fs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(2 * time.Minute)
			for time.Now().Before(deadline) {
				if st, ok := queryState(context.Background(), c, fs.id); ok && step(st) != step(before[fs.kind]) {
					mu.Lock()
					next[fs.kind] = time.Since(up)
					mu.Unlock()
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	var took []string
	for _, fs := range sessions {
		d, ok := next[fs.kind]
		if !ok {
			t.Errorf("%s (%s) took no step within 2 minutes of the restart of %s", fs.kind, fs.id, service)
			continue
		}
		took = append(took, fmt.Sprintf("%s %s", fs.kind, d.Round(10*time.Millisecond)))
	}
	t.Logf("%s out for %s (cluster.sh restart began %s after the kill and took %s); the sessions' next step after it was back: %s",
		service, up.Sub(killed).Round(time.Millisecond), restart.Sub(killed).Round(time.Millisecond),
		up.Sub(restart).Round(time.Millisecond), strings.Join(took, ", "))
}

// check checks what the scenario's expectations do not: every message the session was
// sent is in its transcript, in order, and the chat did continue as new. It returns the
// transcript, one line a message (role, name, content, the tools called; the session's id
// as <id>), to compare with the run without a fault.
func (fs *faultSession) check(t *testing.T, c client.Client, out *scenario.Output) []string {
	t.Helper()
	sent := []string{fs.sc.Input.Prompt}
	for _, a := range fs.sc.User {
		if a.Update == api.SendMessageUpdate || a.Signal == api.UserMessageSignal {
			var text string
			if err := json.Unmarshal(a.Args, &text); err != nil {
				t.Fatalf("%s: %s's args: %v", fs.kind, a.Update+a.Signal, err)
			}
			sent = append(sent, text)
		}
	}
	var users, lines []string
	for _, raw := range out.Messages {
		var m model.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: a message of the transcript: %v", fs.kind, err)
		}
		if m.Role == model.RoleUser {
			users = append(users, m.Content)
		}
		var calls []string
		for _, tc := range m.ToolCalls {
			calls = append(calls, tc.Name)
		}
		// A subagent's tool result names its workflow, whose id has the session's in it.
		lines = append(lines, strings.ReplaceAll(fmt.Sprintf("%s/%s: %s %v", m.Role, m.Name, m.Content, calls), fs.id, "<id>"))
	}
	i := 0
	for _, u := range users {
		if i < len(sent) && u == sent[i] {
			i++
		}
	}
	if i < len(sent) {
		t.Errorf("%s: the transcript lacks the message %q (the user messages in it: %q)", fs.kind, sent[i], users)
	}
	if fs.kind == "chat" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		runs, err := runsOf(ctx, c, fs.id)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) < 2 {
			t.Errorf("chat: %d run(s); want the session to have continued as new", len(runs))
		}
	}
	return lines
}

// playCLI plays sc as workflow id with the stock temporal CLI, as an operator would:
// `temporal workflow start` with the scenario's input, each user action with `temporal
// workflow update execute` or `temporal workflow signal` once the run waits for it, and
// `signal --name end_session` once nothing is left to say. A command the cluster does not
// answer (a service down) is repeated, an update under the same update id. The output is
// collected as scenario.Play collects it. No action is taken before gate is closed (nil:
// none to wait for).
func (cl *cluster) playCLI(t *testing.T, c client.Client, sc *scenario.Scenario, id string, limit time.Duration, gate <-chan struct{}) <-chan played {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	ch := make(chan played, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, err := cl.driveCLI(ctx, t, c, sc, id, gate)
		ch <- played{out, err}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

func (cl *cluster) driveCLI(ctx context.Context, t *testing.T, c client.Client, sc *scenario.Scenario, id string, gate <-chan struct{}) (*scenario.Output, error) {
	input, err := json.Marshal(sc.RunInput())
	if err != nil {
		return nil, err
	}
	// UseExisting: a start repeated after an answer lost on the way is no error.
	if err := cl.retryCLI(ctx, t, "workflow", "start", "--type", api.WorkflowName, "--task-queue", api.TaskQueue,
		"--workflow-id", id, "--id-conflict-policy", "UseExisting", "--input", string(input)); err != nil {
		return nil, err
	}
	t.Logf("temporal workflow start --type %s --workflow-id %s: started", api.WorkflowName, id)
	session := tfclient.New(c, tfclient.Options{}).Session(id)
	closed := make(chan error, 1)
	go func() { _, err := session.Wait(ctx); closed <- err }()

	waits := map[string]bool{api.StatusWaitingUser: true, api.StatusAwaitingApproval: true, api.StatusPaused: true}
	mark := func(st api.State) string {
		return fmt.Sprintf("%s/%d/%d/%v", st.Status, st.Turns, st.ModelCalls, st.Paused)
	}
	actions, ended, after := sc.User, false, ""
	var runErr error
	for finished := false; !finished; {
		select {
		case runErr = <-closed:
			finished = true
			continue
		case <-ctx.Done():
			return nil, fmt.Errorf("%s did not end: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if gate != nil {
			select {
			case <-gate:
				gate = nil
			default:
				continue
			}
		}
		st, ok := queryState(ctx, c, id)
		if !ok || !waits[st.Status] || mark(st) == after {
			continue
		}
		after = mark(st)
		switch {
		case len(actions) > 0 && actions[0].When == st.Status:
			a := actions[0]
			actions = actions[1:]
			args := []string{"workflow", "signal", "--workflow-id", id, "--name", a.Signal}
			update := uuid.NewString()
			if a.Update != "" {
				args = []string{"workflow", "update", "execute", "--workflow-id", id, "--name", a.Update, "--update-id", update}
			}
			if len(a.Args) > 0 {
				args = append(args, "--input", string(a.Args))
			}
			if err := cl.retryCLI(ctx, t, args...); err != nil && !turnCarried(err) {
				return nil, err
			} else if err != nil {
				// The turn was carried to the session's next run: its reply
				// comes from turn_reply, as a user of the stock CLI asks.
				if err := cl.followTurn(ctx, t, id, update); err != nil {
					return nil, err
				}
			}
			t.Logf("temporal workflow %s --name %s: done (the run was %s)", args[1], a.Update+a.Signal, st.Status)
		case st.Status == api.StatusWaitingUser && len(actions) == 0 && !ended:
			ended = true
			if err := cl.retryCLI(ctx, t, "workflow", "signal", "--workflow-id", id, "--name", api.EndSessionSignal); err != nil {
				return nil, err
			}
			t.Logf("temporal workflow signal --name %s: sent", api.EndSessionSignal)
		case len(actions) == 0:
			return nil, fmt.Errorf("%s is %s and the scenario has no action left for it", id, st.Status)
		}
	}
	out := &scenario.Output{WorkflowID: id, RunStatus: scenario.RunStatus(ctx, session, runErr)}
	if err := scenario.Collect(ctx, session, out); err != nil {
		return out, err
	}
	if runErr != nil {
		return out, runErr
	}
	return out, nil
}

// followTurn asks turn_reply for the reply of the turn update started, with
// the stock CLI, for as long as the turn is carried on from run to run.
func (cl *cluster) followTurn(ctx context.Context, t *testing.T, id, update string) error {
	input := fmt.Sprintf(`{"update_id": %q}`, update)
	for n := 1; ; n++ {
		err := cl.retryCLI(ctx, t, "workflow", "update", "execute", "--workflow-id", id, "--name", api.TurnReplyUpdate,
			"--update-id", fmt.Sprintf("%s/reply-%d", update, n), "--input", input)
		if err == nil || !turnCarried(err) {
			return err
		}
	}
}

// turnCarried reports whether the CLI said that an update's turn was carried
// to the session's next run: by the failure's type, or by its message.
func turnCarried(err error) bool {
	return strings.Contains(err.Error(), api.ErrTypeTurnGoesOn) || strings.Contains(err.Error(), api.TurnReplyUpdate+" update with")
}

// retryCLI runs the temporal CLI until it succeeds, for a minute at most: while a service
// of the cluster is down, a command fails. A turn carried to the session's next run
// (TurnGoesOn) is an answer, not a failure to try again: sent again, the message would
// be a second one.
func (cl *cluster) retryCLI(ctx context.Context, t *testing.T, args ...string) error {
	deadline := time.Now().Add(time.Minute)
	for n := 1; ; n++ {
		_, err := cl.temporal(ctx, args...)
		if err == nil {
			if n > 1 {
				t.Logf("temporal %s: succeeded at attempt %d", strings.Join(args[:3], " "), n)
			}
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) || turnCarried(err) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// lineDiff shows where two transcripts part: the first message that differs, and their
// lengths.
func lineDiff(got, want []string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := func(l []string) string {
		if i < len(l) {
			return fmt.Sprintf("%.300q", l[i])
		}
		return "(none)"
	}
	return fmt.Sprintf("%d messages, want %d; message %d is %s, want %s", len(got), len(want), i, at(got), at(want))
}
