package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"google.golang.org/grpc"
)

// --- the executor ----------------------------------------------------------------------------

// executor runs the command named by the first word of the user's text (see `commands`).
type executor struct {
	delay   time.Duration
	mu      sync.Mutex
	waiting map[a2a.TaskID]chan struct{} // `wait` tasks, released by Cancel
}

func parseCommand(msg *a2a.Message) (verb, arg string) {
	var text strings.Builder
	if msg != nil {
		for _, p := range msg.Parts {
			text.WriteString(p.Text())
		}
	}
	verb, arg, _ = strings.Cut(strings.TrimSpace(text.String()), " ")
	return strings.ToLower(verb), strings.TrimSpace(arg)
}

func known(verb string) bool {
	for _, c := range commands {
		if c[0] == verb {
			return true
		}
	}
	return false
}

func slowCount(arg string) int {
	if n, err := strconv.Atoi(arg); err == nil && n >= 0 {
		return n
	}
	return 3
}

func (e *executor) waiter(id a2a.TaskID) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch, ok := e.waiting[id]
	if !ok {
		ch = make(chan struct{})
		e.waiting[id] = ch
	}
	return ch
}

func (e *executor) release(id a2a.TaskID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ch, ok := e.waiting[id]; ok {
		close(ch)
		delete(e.waiting, id)
	}
}

func reply(ec *a2asrv.ExecutorContext, verb, arg string) *a2a.Message {
	text := arg
	if verb != "message" {
		text = fmt.Sprintf("unknown command '%s'", verb)
	}
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text))
	msg.ContextID = ec.ContextID
	return msg
}

func artifact(ec *a2asrv.ExecutorContext, name, text string) *a2a.TaskArtifactUpdateEvent {
	ev := a2a.NewArtifactEvent(ec, a2a.NewTextPart(text))
	ev.Artifact.Name = name
	return ev
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Execute emits what py_peer.PeerExecutor emits: a Message for `message` and unknown verbs,
// else the Task (submitted; working for `wait`), working, the artifacts, completed.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		verb, arg := parseCommand(ec.Message)
		if verb == "message" || !known(verb) {
			yield(reply(ec, verb, arg), nil)
			return
		}
		if ec.StoredTask == nil {
			task := a2a.NewSubmittedTask(ec, ec.Message)
			if verb == "wait" {
				task.Status.State = a2a.TaskStateWorking
			}
			if !yield(task, nil) {
				return
			}
		}
		if verb == "wait" {
			select { // until canceled
			case <-ctx.Done():
			case <-e.waiter(ec.TaskID):
			}
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		if verb == "echo" {
			if !yield(artifact(ec, "echo", strings.TrimRight("echo "+arg, " ")), nil) {
				return
			}
		} else {
			for i := 1; i <= slowCount(arg); i++ {
				if !sleepCtx(ctx, e.delay) {
					return
				}
				if !yield(artifact(ec, fmt.Sprintf("chunk-%d", i), fmt.Sprintf("chunk %d", i)), nil) {
					return
				}
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		defer e.release(ec.TaskID)
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// --- the card --------------------------------------------------------------------------------

type endpoints struct {
	base, jsonrpc, rest, grpc string // grpc is "" without gRPC
}

func endpointsFor(httpPort, grpcPort int) endpoints {
	base := fmt.Sprintf("http://%s:%d", host, httpPort)
	e := endpoints{base: base, jsonrpc: base + jsonrpcPath, rest: base + restPath}
	if grpcPort >= 0 {
		e.grpc = fmt.Sprintf("%s:%d", host, grpcPort)
	}
	return e
}

func (e endpoints) ready() map[string]any {
	info := map[string]any{
		"base_url": e.base, "card_url": e.base + cardPath, "jsonrpc_url": e.jsonrpc,
		"rest_url": e.rest, "grpc_target": nil, "sdk": sdkName, "sdk_version": sdkVersion(),
	}
	if e.grpc != "" {
		info["grpc_target"] = e.grpc
	}
	return info
}

// buildCard lists every binding at v1.0, then again at v0.3 (the same URLs), like py_peer.
func buildCard(e endpoints) *a2a.AgentCard {
	var ifaces []*a2a.AgentInterface
	for _, version := range []a2a.ProtocolVersion{a2a.Version, a2av0.Version} {
		for _, b := range [][2]string{{"JSONRPC", e.jsonrpc}, {"HTTP+JSON", e.rest}, {"GRPC", e.grpc}} {
			if b[1] != "" {
				iface := a2a.NewAgentInterface(b[1], a2a.TransportProtocol(b[0]))
				iface.ProtocolVersion = version
				ifaces = append(ifaces, iface)
			}
		}
	}
	skills := make([]a2a.AgentSkill, 0, len(commands))
	for _, c := range commands {
		skills = append(skills, a2a.AgentSkill{ID: c[0], Name: c[0], Description: c[1], Tags: []string{"peer"}})
	}
	return &a2a.AgentCard{
		Name:                fmt.Sprintf("%s %s peer agent", sdkName, sdkVersion()),
		Description:         "A2A peer agent for a2a-recorder",
		Version:             "1.0.0",
		SupportedInterfaces: ifaces,
		Capabilities:        a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              skills,
	}
}

func extendedCard(card *a2a.AgentCard) *a2a.AgentCard {
	ext := *card
	ext.Description = card.Description + " (extended card)"
	ext.Skills = append(append([]a2a.AgentSkill{}, card.Skills...),
		a2a.AgentSkill{ID: "extended", Name: "extended", Description: "extended only", Tags: []string{"peer"}})
	return &ext
}

// --- HTTP routing: v1.0 and v0.3 on the same URLs ------------------------------------------

// jsonrpcByVersion sends v0.3 method names (`message/send`, ...) to the SDK's v0.3 compat
// handler and everything else to the v1.0 handler, so both versions share /a2a/jsonrpc.
func jsonrpcByVersion(v1, v0 http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var probe struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &probe) == nil && strings.Contains(probe.Method, "/") {
			v0.ServeHTTP(w, r)
			return
		}
		v1.ServeHTTP(w, r)
	})
}

// v1 REST routes start with one of these segments; any other first segment is a tenant.
var restRoots = map[string]bool{
	"message:send": true, "message:stream": true, "tasks": true, "extendedAgentCard": true,
}

// restByVersion serves the v0.3 routes (`/v1/...`), the v1.0 routes, and the v1.0 routes
// behind a `/{tenant}` prefix, all under /a2a/rest.
func restByVersion(v1, v1Tenant, v0 http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case "/"+first == a2av0.RESTPathPrefix:
			v0.ServeHTTP(w, r)
		case restRoots[first]:
			v1.ServeHTTP(w, r)
		default:
			v1Tenant.ServeHTTP(w, r)
		}
	})
}

func httpRoutes(card *a2a.AgentCard, handler a2asrv.RequestHandler) *http.ServeMux {
	mux := http.NewServeMux()
	// The SDK's dual card: v1.0 fields plus the v0.3 ones (url, preferredTransport, ...).
	mux.Handle(cardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	rpc := jsonrpcByVersion(a2asrv.NewJSONRPCHandler(handler), a2av0.NewJSONRPCHandler(handler))
	mux.Handle(jsonrpcPath, rpc)
	mux.Handle(jsonrpcPath+"/", rpc) // the slash form, as py_peer serves it
	rest := restByVersion(a2asrv.NewRESTHandler(handler),
		a2asrv.NewTenantRESTHandler("/{*}", handler), a2av0.NewRESTHandler(handler))
	mux.Handle(restPath+"/", http.StripPrefix(restPath, rest))
	return mux
}

// --- serving ---------------------------------------------------------------------------------

func listen(port int) (net.Listener, int, error) {
	l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", host, port))
	if err != nil {
		return nil, 0, err
	}
	return l, l.Addr().(*net.TCPAddr).Port, nil
}

// anyCaller names the caller for the task store. The SDK's default in-memory store answers
// ListTasks from a caller without a user name with Unauthenticated (-31401, HTTP 401); the
// other peers list tasks for anonymous callers, so this one names them "anonymous".
func anyCaller(ctx context.Context) (string, error) {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil && cc.User.Name != "" {
		return cc.User.Name, nil
	}
	return "anonymous", nil
}

func newHandler(delay time.Duration, card *a2a.AgentCard) a2asrv.RequestHandler {
	// AllowPrivateNetworks: a2a-go >= 2.4.0 refuses webhooks on loopback and private
	// addresses by default (SSRF guard). The recorder's push relay and the tests' webhook
	// receivers listen on 127.0.0.1, so the peer turns the guard off.
	sender := push.NewHTTPPushSender(&push.HTTPSenderConfig{AllowPrivateNetworks: true})
	return a2asrv.NewHandler(
		&executor{delay: delay, waiting: map[a2a.TaskID]chan struct{}{}},
		a2asrv.WithTaskStore(taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: anyCaller})),
		a2asrv.WithPushNotifications(push.NewInMemoryStore(), sender),
		a2asrv.WithExtendedAgentCard(extendedCard(card)),
	)
}

func serve(args agentArgs) error {
	httpL, httpPort, err := listen(args.port)
	if err != nil {
		return err
	}
	var grpcL net.Listener
	grpcPort := -1
	if args.grpcPort >= 0 {
		if grpcL, grpcPort, err = listen(args.grpcPort); err != nil {
			return err
		}
	}
	ep := endpointsFor(httpPort, grpcPort)
	card := buildCard(ep)
	handler := newHandler(args.delay, card)
	httpServer := &http.Server{Handler: httpRoutes(card, handler), ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 2)
	go func() { errs <- httpServer.Serve(httpL) }()
	var grpcServer *grpc.Server
	if grpcL != nil {
		grpcServer = grpc.NewServer()
		a2agrpc.NewHandler(handler).RegisterWith(grpcServer)
		a2agrpcv0.NewHandler(handler).RegisterWith(grpcServer)
		go func() { errs <- grpcServer.Serve(grpcL) }()
	}
	printReady(ep.ready())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = httpServer.Shutdown(shutdown)
	if grpcServer != nil {
		grpcServer.Stop()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func printReady(info map[string]any) {
	data, _ := json.Marshal(info)
	fmt.Printf("READY %s\n", data)
}
