package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// goClient is one scenario run: SDK clients on one binding, and the summary they fill.
type goClient struct {
	args      clientArgs
	sum       *summary
	contextID string
	tenant    string
	card      *a2a.AgentCard
	clients   []*a2aclient.Client
}

// cardResolver reads v1.0 and v0.3 cards. agentcard.DefaultResolver reads only v1.0 fields: a
// v0.3 card (a2a-sdk 0.3) then has no interfaces, and a dual card (@a2a-js/sdk without an
// A2A-Version header) loses supportsAuthenticatedExtendedCard, so GetExtendedAgentCard is
// refused inside the client. The SDK's compat parser reads both.
var cardResolver = &agentcard.Resolver{CardParser: a2av0.NewAgentCardParser()}

func (p *goClient) resolveCard(ctx context.Context) (*a2a.AgentCard, error) {
	u, err := url.Parse(p.args.cardURL)
	if err != nil {
		return nil, err
	}
	base := u.Scheme + "://" + u.Host
	card, err := cardResolver.Resolve(ctx, base, agentcard.WithPath(u.Path))
	if err != nil {
		return nil, err
	}
	p.card = card
	return card, nil
}

// transports are the factory options of one binding, v1.0 and v0.3 (the client picks the
// newest version the card offers); the client gets no other binding.
func transports(binding string) []a2aclient.FactoryOption {
	plain := grpc.WithTransportCredentials(insecure.NewCredentials())
	switch binding {
	case "HTTP+JSON":
		return []a2aclient.FactoryOption{a2aclient.WithRESTTransport(nil),
			a2av0.WithRESTTransport(a2av0.RESTTransportConfig{})}
	case "GRPC":
		return []a2aclient.FactoryOption{a2agrpc.WithGRPCTransport(plain), a2agrpcv0.WithGRPCTransport(plain)}
	default:
		return []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(nil),
			a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{})}
	}
}

func (p *goClient) client(ctx context.Context, binding string) (*a2aclient.Client, error) {
	if binding == "" {
		binding = p.args.binding
	}
	card := p.card
	if card == nil {
		var err error
		if card, err = p.resolveCard(ctx); err != nil {
			return nil, err
		}
	}
	opts := append(transports(binding), a2aclient.WithDefaultsDisabled(),
		a2aclient.WithConfig(a2aclient.Config{
			PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocol(binding)},
		}))
	c, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		return nil, err
	}
	p.clients = append(p.clients, c)
	return c, nil
}

func (p *goClient) close() {
	for _, c := range p.clients {
		_ = c.Destroy()
	}
}

func (p *goClient) message(text string) *a2a.Message {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.ContextID = p.contextID
	return msg
}

func (p *goClient) request(text string, cfg *a2a.SendMessageConfig) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: p.message(text), Tenant: p.tenant, Config: cfg}
}

// send runs a non-streaming SendMessage and records it as `call`; the Task, if one came.
func (p *goClient) send(ctx context.Context, c *a2aclient.Client, req *a2a.SendMessageRequest, call string) (*a2a.Task, error) {
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		return nil, err
	}
	events := []string{eventName(res)}
	p.sum.add(call, events, terminalOf(events), nil)
	task, _ := res.(*a2a.Task)
	return task, nil
}

// --- naming what the client saw --------------------------------------------------------------

func texts(parts a2a.ContentParts) []string {
	out := []string{}
	for _, part := range parts {
		if t, ok := part.Content.(a2a.Text); ok {
			out = append(out, string(t))
		}
	}
	return out
}

func artifactTexts(task *a2a.Task) []string {
	out := []string{}
	for _, a := range task.Artifacts {
		out = append(out, texts(a.Parts)...)
	}
	return out
}

func eventName(ev a2a.Event) string {
	switch v := ev.(type) {
	case *a2a.Task:
		return "task:" + shortState(string(v.Status.State))
	case *a2a.TaskStatusUpdateEvent:
		return "status:" + shortState(string(v.Status.State))
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact:" + strings.Join(texts(v.Artifact.Parts), "")
	case *a2a.Message:
		return "message:" + strings.Join(texts(v.Parts), "")
	}
	return fmt.Sprintf("%T:", ev)
}

func state(t *a2a.Task) string { return shortState(string(t.Status.State)) }

// errorNames names the SDK's error sentinels the way the other peers name their error classes.
var errorNames = []struct {
	err  error
	name string
}{
	{a2a.ErrTaskNotFound, "TaskNotFoundError"},
	{a2a.ErrTaskNotCancelable, "TaskNotCancelableError"},
	{a2a.ErrPushNotificationNotSupported, "PushNotificationNotSupportedError"},
	{a2a.ErrUnsupportedOperation, "UnsupportedOperationError"},
	{a2a.ErrUnsupportedContentType, "ContentTypeNotSupportedError"},
	{a2a.ErrInvalidAgentResponse, "InvalidAgentResponseError"},
	{a2a.ErrExtendedCardNotConfigured, "ExtendedAgentCardNotConfiguredError"},
	{a2a.ErrExtensionSupportRequired, "ExtensionSupportRequiredError"},
	{a2a.ErrVersionNotSupported, "VersionNotSupportedError"},
	{a2a.ErrUnauthenticated, "UnauthenticatedError"},
	{a2a.ErrUnauthorized, "UnauthorizedError"},
	{a2a.ErrParseError, "JSONParseError"},
	{a2a.ErrInvalidRequest, "InvalidRequestError"},
	{a2a.ErrMethodNotFound, "MethodNotFoundError"},
	{a2a.ErrInvalidParams, "InvalidParamsError"},
	{a2a.ErrInternalError, "InternalError"},
	{a2a.ErrServerError, "ServerError"},
}

func errorName(err error) string {
	for _, e := range errorNames {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return fmt.Sprintf("%T", err)
}

// expectError runs action and records the error's name; it fails unless `wanted` names it.
func (p *goClient) expectError(call, wanted string, action func() error) error {
	err := action()
	if err == nil {
		p.sum.add(call, nil, "", step{"error": nil})
		return failf("%s: no error raised, wanted %s", call, wanted)
	}
	name := errorName(err)
	p.sum.add(call, nil, "", step{"error": name, "message": clip(err.Error(), 200)})
	if !strings.Contains(name, wanted) {
		return failf("%s: wanted %s, got %s: %v", call, wanted, name, err)
	}
	return nil
}

// --- scenarios -------------------------------------------------------------------------------

func scCard(ctx context.Context, p *goClient) error {
	card, err := p.resolveCard(ctx)
	if err != nil {
		return err
	}
	return describeCard(p.sum, card)
}

func describeCard(sum *summary, card *a2a.AgentCard) error {
	ifaces := []string{}
	for _, i := range card.SupportedInterfaces {
		ifaces = append(ifaces, fmt.Sprintf("%s@%s %s", i.ProtocolBinding, i.ProtocolVersion, i.URL))
	}
	sort.Strings(ifaces)
	skills := []string{}
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	caps := card.Capabilities
	sum.add("GetAgentCard", nil, "", step{
		"name": card.Name, "interfaces": ifaces, "skills": skills,
		"capabilities": map[string]bool{
			"streaming": caps.Streaming, "push": caps.PushNotifications, "extended": caps.ExtendedAgentCard,
		},
	})
	if len(card.SupportedInterfaces) == 0 {
		return failf("card lists no interfaces")
	}
	return nil
}

func blocking(ctx context.Context, p *goClient, binding string) error {
	c, err := p.client(ctx, binding)
	if err != nil {
		return err
	}
	task, err := p.send(ctx, c, p.request("echo hello", nil), "SendMessage")
	if err != nil {
		return err
	}
	return checkEcho(p.sum, task)
}

// checkEcho: the blocking send of "echo hello" gave a completed task with that artifact.
func checkEcho(sum *summary, task *a2a.Task) error {
	if task == nil {
		return failf("no task returned")
	}
	got := artifactTexts(task)
	sum.last()["texts"] = got
	if state(task) != "completed" {
		return failf("state %s", state(task))
	}
	for _, t := range got {
		if t == "echo hello" {
			return nil
		}
	}
	return failf("no 'echo hello' artifact")
}

func scBlocking(ctx context.Context, p *goClient) error { return blocking(ctx, p, "") }

func scPolling(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	task, err := p.send(ctx, c, p.request("slow 3", &a2a.SendMessageConfig{ReturnImmediately: true}), "SendMessage")
	if err != nil {
		return err
	}
	if task == nil {
		return failf("no task returned")
	}
	return pollUntilDone(p.sum, func() (*a2a.Task, error) {
		return c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, Tenant: p.tenant})
	})
}

// pollUntilDone gets the task until it ends and records the states seen, as "GetTask*".
func pollUntilDone(sum *summary, get func() (*a2a.Task, error)) error {
	var seen []string
	for {
		got, err := get()
		if err != nil {
			return err
		}
		if s := state(got); len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		if !got.Status.State.Terminal() {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		events := make([]string, len(seen))
		for i, s := range seen {
			events[i] = "task:" + s
		}
		last := seen[len(seen)-1]
		sum.add("GetTask*", events, last, step{"texts": artifactTexts(got)})
		if last != "completed" {
			return failf("ended %s", last)
		}
		return nil
	}
}

func scStreaming(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	events := []string{}
	for ev, err := range c.SendStreamingMessage(ctx, p.request("slow 3", nil)) {
		if err != nil {
			return err
		}
		events = append(events, eventName(ev))
	}
	p.sum.add("SendStreamingMessage", events, terminalOf(events), nil)
	if terminalOf(events) != "completed" {
		return failf("stream ended %s", terminalOf(events))
	}
	return nil
}

func (p *goClient) startWait(ctx context.Context, c *a2aclient.Client) (*a2a.Task, error) {
	task, err := p.send(ctx, c, p.request("wait", &a2a.SendMessageConfig{ReturnImmediately: true}), "SendMessage")
	if err == nil && task == nil {
		err = failf("no task returned for 'wait'")
	}
	return task, err
}

// subscription consumes SubscribeToTask in the background.
type subscription struct {
	mu     sync.Mutex
	events []string
	first  chan struct{}
	done   chan error
}

func subscribe(ctx context.Context, c *a2aclient.Client, req *a2a.SubscribeToTaskRequest) *subscription {
	s := &subscription{first: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		var once sync.Once
		for ev, err := range c.SubscribeToTask(ctx, req) {
			if err != nil {
				s.done <- err
				return
			}
			s.mu.Lock()
			s.events = append(s.events, eventName(ev))
			s.mu.Unlock()
			once.Do(func() { close(s.first) })
		}
		s.done <- nil
	}()
	return s
}

func scSubscribe(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	task, err := p.startWait(ctx, c)
	if err != nil {
		return err
	}
	sub := subscribe(ctx, c, &a2a.SubscribeToTaskRequest{ID: task.ID, Tenant: p.tenant})
	var ended error
	finished := false
	// Cancel once the subscription is live, or after a second without an event.
	select {
	case <-sub.first:
	case ended = <-sub.done:
		finished = true
	case <-time.After(time.Second):
	}
	if finished && ended != nil {
		return ended
	}
	select {
	case <-sub.first:
		p.sum.facts["event_before_cancel"] = true
	default:
		p.sum.facts["event_before_cancel"] = false
	}
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID, Tenant: p.tenant})
	if err != nil {
		return err
	}
	p.sum.add("CancelTask", nil, state(canceled), nil)
	if !finished {
		if err := <-sub.done; err != nil {
			return err
		}
	}
	events := append([]string{}, sub.events...)
	p.sum.add("SubscribeToTask", events, "", nil)
	if terminalOf(events) != "canceled" {
		return failf("subscription ended %s", terminalOf(events))
	}
	return nil
}

func scCancel(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	task, err := p.startWait(ctx, c)
	if err != nil {
		return err
	}
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID, Tenant: p.tenant})
	if err != nil {
		return err
	}
	p.sum.add("CancelTask", nil, state(canceled), nil)
	if state(canceled) != "canceled" {
		return failf("state %s", state(canceled))
	}
	return nil
}

func (p *goClient) pushConfig(taskID a2a.TaskID, id string) *a2a.PushConfig {
	target := p.args.webhookURL
	if target == "" {
		target = noWebhookURL
	}
	return &a2a.PushConfig{Tenant: p.tenant, ID: id, TaskID: taskID, URL: target, Token: pushToken,
		Auth: &a2a.PushAuthInfo{Scheme: pushScheme, Credentials: pushCreds}}
}

func configFields(c *a2a.PushConfig) map[string]string {
	scheme := ""
	if c.Auth != nil {
		scheme = c.Auth.Scheme
	}
	return map[string]string{"url": c.URL, "token": c.Token, "scheme": scheme}
}

func scPush(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	task, err := p.send(ctx, c, p.request("echo hello", nil), "SendMessage")
	if err != nil {
		return err
	}
	if task == nil {
		return failf("no task returned")
	}
	cid := "cfg-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	created, err := c.CreateTaskPushConfig(ctx, p.pushConfig(task.ID, cid))
	if err != nil {
		return err
	}
	p.sum.add("CreateTaskPushNotificationConfig", nil, "", step{"config": configFields(created), "same_id": created.ID == cid})
	got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID, Tenant: p.tenant})
	if err != nil {
		return err
	}
	p.sum.add("GetTaskPushNotificationConfig", nil, "", step{"config": configFields(got)})
	list := &a2a.ListTaskPushConfigRequest{TaskID: task.ID, Tenant: p.tenant}
	listed, err := c.ListTaskPushConfigs(ctx, list)
	if err != nil {
		return err
	}
	p.sum.add("ListTaskPushNotificationConfigs", nil, "", step{"count": len(listed)})
	del := &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID, Tenant: p.tenant}
	if err := c.DeleteTaskPushConfig(ctx, del); err != nil {
		p.sum.add("DeleteTaskPushNotificationConfig", nil, "", step{"error": errorName(err), "message": clip(err.Error(), 200)})
	} else {
		p.sum.add("DeleteTaskPushNotificationConfig", nil, "", nil)
	}
	after, err := c.ListTaskPushConfigs(ctx, list)
	if err != nil {
		return err
	}
	p.sum.add("ListTaskPushNotificationConfigs", nil, "", step{"count": len(after)})
	if len(listed) != 1 || len(after) != 0 {
		return failf("config not listed/deleted")
	}
	if p.args.webhookURL == "" {
		return nil
	}
	pushed, err := p.send(ctx, c, p.request("echo push", &a2a.SendMessageConfig{PushConfig: p.pushConfig("", "")}), "SendMessage+push")
	if err != nil {
		return err
	}
	if pushed == nil || state(pushed) != "completed" {
		return failf("push send failed")
	}
	return nil
}

func scList(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	if _, err := p.send(ctx, c, p.request("echo hello", nil), "SendMessage"); err != nil {
		return err
	}
	page, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: p.contextID, Tenant: p.tenant, IncludeArtifacts: true})
	if err != nil {
		return err
	}
	return describeList(p.sum, page)
}

func describeList(sum *summary, page *a2a.ListTasksResponse) error {
	states := []string{}
	for _, t := range page.Tasks {
		states = append(states, state(t))
	}
	sum.add("ListTasks", nil, "", step{"states": states, "total": page.TotalSize, "count": len(page.Tasks)})
	if len(page.Tasks) != 1 {
		return failf("listed %d tasks", len(page.Tasks))
	}
	return nil
}

func scExtended(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	card, err := c.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{Tenant: p.tenant})
	if err != nil {
		return err
	}
	return describeExtended(p.sum, card)
}

func describeExtended(sum *summary, card *a2a.AgentCard) error {
	skills := []string{}
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	sum.add("GetExtendedAgentCard", nil, "", step{"description": card.Description, "skills": skills})
	if !strings.Contains(card.Description, "extended") {
		return failf("not the extended card")
	}
	return nil
}

func scErrors(ctx context.Context, p *goClient) error {
	c, err := p.client(ctx, "")
	if err != nil {
		return err
	}
	unknown := &a2a.GetTaskRequest{ID: a2a.TaskID(uuid.NewString()), Tenant: p.tenant}
	if err := p.expectError("GetTask(unknown)", "TaskNotFound", func() error {
		_, err := c.GetTask(ctx, unknown)
		return err
	}); err != nil {
		return err
	}
	task, err := p.send(ctx, c, p.request("echo hello", nil), "SendMessage")
	if err != nil {
		return err
	}
	if task == nil {
		return failf("no task returned")
	}
	return p.expectError("CancelTask(completed)", "TaskNotCancelable", func() error {
		_, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID, Tenant: p.tenant})
		return err
	})
}

func scTenant(ctx context.Context, p *goClient) error {
	p.tenant = p.args.tenant
	if p.tenant == "" {
		p.tenant = "tenant-a"
	}
	p.sum.facts["tenant"] = p.tenant
	return blocking(ctx, p, "")
}

func scRest(ctx context.Context, p *goClient) error {
	p.sum.binding = "HTTP+JSON"
	return blocking(ctx, p, "HTTP+JSON")
}

var scenarioFuncs = map[string]func(context.Context, *goClient) error{
	"01-agent-card":    scCard,
	"03-blocking-task": scBlocking,
	"04-polling":       scPolling,
	"05-streaming":     scStreaming,
	"06-subscribe":     scSubscribe,
	"07-cancel":        scCancel,
	"08-push-configs":  scPush,
	"09-list-tasks":    scList,
	"10-extended-card": scExtended,
	"11-errors":        scErrors,
	"12-tenant":        scTenant,
	"16-rest-binding":  scRest,
}

// clientMain runs one scenario with a2aclient.
func clientMain(args clientArgs) int {
	p := &goClient{args: args, sum: newSummary(args), contextID: uuid.NewString(), tenant: args.tenant}
	defer p.close()
	return finish(args, p.sum, func(ctx context.Context) error {
		return scenarioFuncs[args.scenario](ctx, p)
	}, errorName)
}

// finish runs a scenario within the timeout, prints its summary as JSON, returns the exit code.
func finish(args clientArgs, sum *summary, body func(context.Context) error, naming func(error) string) int {
	ctx, cancel := context.WithTimeout(context.Background(), args.timeout)
	defer cancel()
	// A call that ignores its context still cannot keep the process past the timeout.
	hard := time.AfterFunc(args.timeout+2*time.Second, func() {
		printJSON(sum.asMap(false, fmt.Sprintf("TimeoutError: scenario took over %s", args.timeout)))
		os.Exit(1)
	})
	err := body(ctx)
	hard.Stop()
	var skip *skipped
	var failed *scenarioFailed
	switch {
	case err == nil:
		printJSON(sum.asMap(true, ""))
		return 0
	case errors.As(err, &skip):
		printJSON(map[string]any{"skipped": skip.why, "sdk": sum.sdk, "sdk_version": sum.version,
			"scenario": args.scenario, "binding": args.binding})
		return 0
	case errors.As(err, &failed):
		printJSON(sum.asMap(false, failed.why))
	default:
		fmt.Fprintf(os.Stderr, "%s: %+v\n", naming(err), err)
		printJSON(sum.asMap(false, clip(fmt.Sprintf("%s: %v", naming(err), err), 500)))
	}
	return 1
}
