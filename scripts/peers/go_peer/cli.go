package main

// The a2a CLI peer: the same binary under the name `a2a-cli-peer` drives the SDK's own `a2a`
// command (cmd/a2a, built next to it) instead of a2aclient, and serves `a2a serve --proxy`.
//
//   client: each call of a scenario is one `a2a` process (`send`, `send --stream`,
//     `get task`, `cancel`, `subscribe`, `list tasks`, `discover [--extended]`) with
//     `-o json`, `--transport` and the interface URL the card lists for the binding.
//     The CLI has no push-config commands, so 08-push-configs is skipped.
//   agent: our Go agent (go-peer) behind `a2a serve --proxy <its JSON-RPC URL> --transport
//     jsonrpc --card <file>`: the proxy re-issues every call through an a2aclient. One
//     `serve` serves one transport, and `--transport` is also the transport of its upstream
//     client, which then calls the proxy URL itself (no card) while the proxy still fetches
//     the upstream card from <URL>/.well-known/agent-card.json: for an agent whose JSON-RPC
//     endpoint is not its base URL that fetch is a 404, so the card comes from a file (the
//     upstream card with the proxy's own interface, as `serve --proxy` derives it).
//     `--transport grpc` opens its card listener on every interface (":0"), so only JSON-RPC
//     is served here.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
)

const cliSDKName = "a2a-go-cli"

func sibling(name string) string {
	self, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(self), name)
}

// --- client ----------------------------------------------------------------------------------

type cliClient struct {
	args      clientArgs
	sum       *summary
	contextID string
	tenant    string
	binding   string
	target    string // the interface URL the card lists for the binding
}

// cliFailed is an `a2a` command that exited non-zero; stderr holds its "Error: ..." line.
type cliFailed struct{ stderr string }

func (e *cliFailed) Error() string { return strings.TrimSpace(e.stderr) }

// cliErrorName names the error the CLI printed by the SDK sentinel whose text it contains
// (case aside): the CLI prints only the error message, so the class comes from the words.
func cliErrorName(err error) string {
	var failed *cliFailed
	if !errors.As(err, &failed) {
		return errorName(err)
	}
	for _, e := range errorNames {
		if strings.Contains(strings.ToLower(failed.stderr), e.err.Error()) {
			return e.name
		}
	}
	return "CLIError"
}

var cliTransports = map[string]string{"JSONRPC": "jsonrpc", "HTTP+JSON": "rest", "GRPC": "grpc"}

func (c *cliClient) command(ctx context.Context, sub []string, rest ...string) *exec.Cmd {
	argv := append(append([]string{}, sub...), "-o", "json", "--transport", cliTransports[c.binding])
	if c.binding == "GRPC" {
		argv = append(argv, "--insecure")
	}
	if c.tenant != "" {
		argv = append(argv, "--tenant", c.tenant)
	}
	argv = append(argv, c.target)
	cmd := exec.CommandContext(ctx, sibling("a2a"), append(argv, rest...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// run runs one `a2a` command to its end; its stdout, or a cliFailed.
func (c *cliClient) run(ctx context.Context, sub []string, rest ...string) ([]byte, error) {
	cmd := c.command(ctx, sub, rest...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	os.Stderr.Write(stderr.Bytes())
	if err != nil {
		return nil, &cliFailed{stderr: stderr.String()}
	}
	return out, nil
}

// resolveTarget reads the card (the SDK's compat parser, as go-peer does) for the URL of the
// binding's newest interface.
func (c *cliClient) resolveTarget(ctx context.Context) error {
	p := &goClient{args: c.args}
	card, err := p.resolveCard(ctx)
	if err != nil {
		return err
	}
	for _, version := range []a2a.ProtocolVersion{a2a.Version, "0.3"} {
		for _, iface := range card.SupportedInterfaces {
			if string(iface.ProtocolBinding) == c.binding && iface.ProtocolVersion == version {
				c.target = iface.URL
				return nil
			}
		}
	}
	return failf("the card lists no %s interface", c.binding)
}

func decodeResult(out []byte) (a2a.Event, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(out, &probe); err != nil {
		return nil, err
	}
	if _, isTask := probe["status"]; isTask {
		var task a2a.Task
		return &task, json.Unmarshal(out, &task)
	}
	var msg a2a.Message
	return &msg, json.Unmarshal(out, &msg)
}

func decodeTask(out []byte) (*a2a.Task, error) {
	var task a2a.Task
	return &task, json.Unmarshal(out, &task)
}

// streamEvents reads the StreamResponse documents `a2a ... -o json` prints one after another.
func streamEvents(r io.Reader, each func(string)) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var sr a2a.StreamResponse
		if err := dec.Decode(&sr); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		each(eventName(sr.Event))
	}
}

func (c *cliClient) send(ctx context.Context, text, call string, flags ...string) (*a2a.Task, error) {
	out, err := c.run(ctx, append([]string{"send", "--context", c.contextID}, flags...), text)
	if err != nil {
		return nil, err
	}
	res, err := decodeResult(out)
	if err != nil {
		return nil, err
	}
	events := []string{eventName(res)}
	c.sum.add(call, events, terminalOf(events), nil)
	task, _ := res.(*a2a.Task)
	return task, nil
}

func (c *cliClient) expectError(call, wanted string, action func() error) error {
	err := action()
	if err == nil {
		c.sum.add(call, nil, "", step{"error": nil})
		return failf("%s: no error raised, wanted %s", call, wanted)
	}
	name := cliErrorName(err)
	c.sum.add(call, nil, "", step{"error": name, "message": clip(err.Error(), 200)})
	if !strings.Contains(name, wanted) {
		return failf("%s: wanted %s, got %s: %v", call, wanted, name, err)
	}
	return nil
}

func cliCard(ctx context.Context, c *cliClient) error {
	base := strings.TrimSuffix(c.args.cardURL, cardPath)
	cmd := exec.CommandContext(ctx, sibling("a2a"), "discover", "-o", "json", base)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return &cliFailed{stderr: err.Error()}
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(out, &card); err != nil {
		return err
	}
	return describeCard(c.sum, &card)
}

func cliBlocking(ctx context.Context, c *cliClient) error {
	task, err := c.send(ctx, "echo hello", "SendMessage")
	if err != nil {
		return err
	}
	return checkEcho(c.sum, task)
}

func cliPolling(ctx context.Context, c *cliClient) error {
	task, err := c.send(ctx, "slow 3", "SendMessage", "--immediate")
	if err != nil {
		return err
	}
	if task == nil {
		return failf("no task returned")
	}
	return pollUntilDone(c.sum, func() (*a2a.Task, error) {
		out, err := c.run(ctx, []string{"get", "task"}, string(task.ID))
		if err != nil {
			return nil, err
		}
		return decodeTask(out)
	})
}

func cliStreaming(ctx context.Context, c *cliClient) error {
	out, err := c.run(ctx, []string{"send", "--stream", "--context", c.contextID}, "slow 3")
	if err != nil {
		return err
	}
	events := []string{}
	if err := streamEvents(bytes.NewReader(out), func(e string) { events = append(events, e) }); err != nil {
		return err
	}
	c.sum.add("SendStreamingMessage", events, terminalOf(events), nil)
	if terminalOf(events) != "completed" {
		return failf("stream ended %s", terminalOf(events))
	}
	return nil
}

func (c *cliClient) cancel(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	out, err := c.run(ctx, []string{"cancel"}, string(id))
	if err != nil {
		return nil, err
	}
	return decodeTask(out)
}

func cliStartWait(ctx context.Context, c *cliClient) (*a2a.Task, error) {
	task, err := c.send(ctx, "wait", "SendMessage", "--immediate")
	if err == nil && task == nil {
		err = failf("no task returned for 'wait'")
	}
	return task, err
}

func cliSubscribe(ctx context.Context, c *cliClient) error {
	task, err := cliStartWait(ctx, c)
	if err != nil {
		return err
	}
	cmd := c.command(ctx, []string{"subscribe"}, string(task.ID))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	events, first, read := []string{}, make(chan struct{}), make(chan error, 1)
	go func() {
		read <- streamEvents(stdout, func(e string) {
			if len(events) == 0 {
				close(first)
			}
			events = append(events, e)
		})
	}()
	select { // cancel once the subscription is live, or after a second without an event
	case <-first:
		c.sum.facts["event_before_cancel"] = true
	case <-time.After(time.Second):
		c.sum.facts["event_before_cancel"] = false
	}
	canceled, err := c.cancel(ctx, task.ID)
	if err != nil {
		return err
	}
	c.sum.add("CancelTask", nil, state(canceled), nil)
	readErr := <-read
	if err := cmd.Wait(); err != nil {
		return &cliFailed{stderr: "a2a subscribe: " + err.Error()}
	}
	if readErr != nil {
		return readErr
	}
	c.sum.add("SubscribeToTask", events, "", nil)
	if terminalOf(events) != "canceled" {
		return failf("subscription ended %s", terminalOf(events))
	}
	return nil
}

func cliCancel(ctx context.Context, c *cliClient) error {
	task, err := cliStartWait(ctx, c)
	if err != nil {
		return err
	}
	canceled, err := c.cancel(ctx, task.ID)
	if err != nil {
		return err
	}
	c.sum.add("CancelTask", nil, state(canceled), nil)
	if state(canceled) != "canceled" {
		return failf("state %s", state(canceled))
	}
	return nil
}

func cliList(ctx context.Context, c *cliClient) error {
	if _, err := c.send(ctx, "echo hello", "SendMessage"); err != nil {
		return err
	}
	out, err := c.run(ctx, []string{"list", "tasks", "--context", c.contextID, "--with-artifacts"})
	if err != nil {
		return err
	}
	var page a2a.ListTasksResponse
	if err := json.Unmarshal(out, &page); err != nil {
		return err
	}
	return describeList(c.sum, &page)
}

func cliExtended(ctx context.Context, c *cliClient) error {
	out, err := c.run(ctx, []string{"discover", "--extended"})
	if err != nil {
		return err
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(out, &card); err != nil {
		return err
	}
	return describeExtended(c.sum, &card)
}

func cliErrors(ctx context.Context, c *cliClient) error {
	if err := c.expectError("GetTask(unknown)", "TaskNotFound", func() error {
		_, err := c.run(ctx, []string{"get", "task"}, uuid.NewString())
		return err
	}); err != nil {
		return err
	}
	task, err := c.send(ctx, "echo hello", "SendMessage")
	if err != nil {
		return err
	}
	if task == nil {
		return failf("no task returned")
	}
	return c.expectError("CancelTask(completed)", "TaskNotCancelable", func() error {
		_, err := c.cancel(ctx, task.ID)
		return err
	})
}

func cliTenant(ctx context.Context, c *cliClient) error {
	if c.tenant == "" {
		c.tenant = "tenant-a"
	}
	c.sum.facts["tenant"] = c.tenant
	return cliBlocking(ctx, c)
}

var cliScenarios = map[string]func(context.Context, *cliClient) error{
	"01-agent-card":    cliCard,
	"03-blocking-task": cliBlocking,
	"04-polling":       cliPolling,
	"05-streaming":     cliStreaming,
	"06-subscribe":     cliSubscribe,
	"07-cancel":        cliCancel,
	"08-push-configs": func(context.Context, *cliClient) error {
		return &skipped{why: "the a2a CLI has no push-config commands"}
	},
	"09-list-tasks":    cliList,
	"10-extended-card": cliExtended,
	"11-errors":        cliErrors,
	"12-tenant":        cliTenant,
	"16-rest-binding":  cliBlocking, // with the binding set to HTTP+JSON below
}

func cliClientMain(args clientArgs) int {
	sum := newSummary(args)
	sum.sdk = cliSDKName
	c := &cliClient{args: args, sum: sum, contextID: uuid.NewString(), tenant: args.tenant, binding: args.binding}
	if args.scenario == "16-rest-binding" {
		c.binding, sum.binding = "HTTP+JSON", "HTTP+JSON"
	}
	return finish(args, sum, func(ctx context.Context) error {
		if args.scenario != "01-agent-card" && args.scenario != "08-push-configs" {
			if err := c.resolveTarget(ctx); err != nil {
				return err
			}
		}
		return cliScenarios[args.scenario](ctx, c)
	}, cliErrorName)
}

// --- agent: `a2a serve --proxy` in front of go-peer -----------------------------------------

func freePort(port int) (int, error) {
	l, p, err := listen(port)
	if err != nil {
		return 0, err
	}
	return p, l.Close()
}

// readyOf starts cmd and waits for its READY line.
func readyOf(cmd *exec.Cmd) (map[string]any, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "READY "); ok {
			var info map[string]any
			return info, json.Unmarshal([]byte(rest), &info)
		}
	}
	return nil, fmt.Errorf("%s exited before READY", cmd.Path)
}

func waitForCard(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no card at %s after %s", url, timeout)
}

func stopProcess(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = cmd.Process.Kill()
	}
}

// proxyCard writes the upstream card with the proxy's JSON-RPC interface in place of its own.
func proxyCard(upstreamCard, base string) (string, error) {
	resp, err := http.Get(upstreamCard)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var card a2a.AgentCard
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		return "", err
	}
	card.SupportedInterfaces = []*a2a.AgentInterface{a2a.NewAgentInterface(base, a2a.TransportProtocolJSONRPC)}
	f, err := os.CreateTemp("", "a2a-cli-peer-card-*.json")
	if err != nil {
		return "", err
	}
	defer f.Close()
	return f.Name(), json.NewEncoder(f).Encode(&card)
}

func cliServe(args agentArgs) error {
	upstream := exec.Command(sibling("go-peer"), "agent", "--port", "0", "--grpc-port", "-1",
		"--delay", fmt.Sprint(args.delay.Seconds()))
	upstream.Stderr = os.Stderr
	info, err := readyOf(upstream)
	defer stopProcess(upstream, syscall.SIGTERM)
	if err != nil {
		return err
	}
	port, err := freePort(args.port)
	if err != nil {
		return err
	}
	base := fmt.Sprintf("http://%s:%d", host, port)
	cardFile, err := proxyCard(fmt.Sprint(info["card_url"]), base)
	if err != nil {
		return err
	}
	defer os.Remove(cardFile)
	proxy := exec.Command(sibling("a2a"), "serve", "--proxy", fmt.Sprint(info["jsonrpc_url"]),
		"--transport", "jsonrpc", "--card", cardFile, "--host", host, "--port", fmt.Sprint(port))
	proxy.Stdout, proxy.Stderr = os.Stderr, os.Stderr
	if err := proxy.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- proxy.Wait() }()
	defer func() { // `serve` stops on SIGINT
		_ = proxy.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = proxy.Process.Kill()
		}
	}()
	if err := waitForCard(base+cardPath, 20*time.Second); err != nil {
		return err
	}
	printReady(map[string]any{
		"base_url": base, "card_url": base + cardPath, "jsonrpc_url": base, "rest_url": nil,
		"grpc_target": nil, "sdk": cliSDKName, "sdk_version": sdkVersion(),
		"upstream": info["base_url"],
	})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	select {
	case <-ctx.Done():
		return nil
	case err := <-exited:
		exited <- err
		return fmt.Errorf("a2a serve --proxy exited: %v", err)
	}
}
