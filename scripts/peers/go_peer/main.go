// Command go-peer is the A2A peer on the Go SDK (github.com/a2aproject/a2a-go/v2): `agent` and
// `client`, with the command line and JSON summary of run.py (see its docstring).
//
// The agent is the project's demo agent rebuilt on a2asrv: JSON-RPC at /a2a/jsonrpc, HTTP+JSON
// under /a2a/rest, gRPC with the v1.0 and v0.3 services, v0.3 compat on every binding (the Go
// SDK's a2acompat/a2av0), the SDK's push sender with AllowPrivateNetworks on (its default
// refuses loopback webhooks, so the recorder's relay on 127.0.0.1 would never be reached),
// and an extended card. The client runs one scenario with the SDK's own a2aclient.
//
// Named a2a-cli-peer, the same binary drives the SDK's `a2a` CLI instead (cli.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

const (
	sdkName      = "a2a-go"
	sdkModule    = "github.com/a2aproject/a2a-go/v2"
	host         = "127.0.0.1"
	cardPath     = "/.well-known/agent-card.json"
	jsonrpcPath  = "/a2a/jsonrpc"
	restPath     = "/a2a/rest"
	noWebhookURL = "http://127.0.0.1:9/no-webhook"
	pushToken    = "peer-token-1"
	pushScheme   = "Bearer"
	pushCreds    = "peer-credentials-1"
)

var (
	bindings  = []string{"JSONRPC", "HTTP+JSON", "GRPC"}
	scenarios = []string{
		"01-agent-card", "03-blocking-task", "04-polling", "05-streaming", "06-subscribe",
		"07-cancel", "08-push-configs", "09-list-tasks", "10-extended-card", "11-errors",
		"12-tenant", "16-rest-binding",
	}
	// The executor's commands (first word of the user's text), as in scripts/peers/_common.py.
	commands = [][2]string{
		{"echo", "echo X: task completes with the artifact 'echo X'"},
		{"slow", "slow N: N artifact updates spaced by --delay, then completed"},
		{"wait", "wait: stays working until canceled"},
		{"message", "message X: replies with a Message 'X', no task"},
	}
)

// sdkVersion is the a2a-go version linked into this binary, without the leading "v".
func sdkVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == sdkModule {
			return strings.TrimPrefix(dep.Version, "v")
		}
	}
	return "unknown"
}

type agentArgs struct {
	port, grpcPort int
	delay          time.Duration
}

type clientArgs struct {
	cardURL, binding, scenario, webhookURL, tenant string
	timeout                                        time.Duration
}

func usage(why string) {
	fmt.Fprintf(os.Stderr, "go-peer: %s\nusage: go-peer agent --port P [--grpc-port G] [--delay S]\n"+
		"       go-peer client --card-url URL --binding B --scenario S [--webhook-url U] [--tenant T] [--timeout S]\n", why)
	os.Exit(2)
}

func oneOf(value string, allowed []string, name string) {
	for _, a := range allowed {
		if a == value {
			return
		}
	}
	usage(fmt.Sprintf("--%s must be one of %s", name, strings.Join(allowed, ", ")))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func parseAgent(argv []string) agentArgs {
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	port := fs.Int("port", 0, "HTTP port (0: a free port)")
	grpcPort := fs.Int("grpc-port", 0, "gRPC port (0: a free port, -1: no gRPC)")
	delay := fs.Float64("delay", 0.05, "seconds between slow events")
	_ = fs.Parse(argv)
	return agentArgs{port: *port, grpcPort: *grpcPort, delay: seconds(*delay)}
}

func parseClient(argv []string) clientArgs {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	var a clientArgs
	fs.StringVar(&a.cardURL, "card-url", "", "the agent card URL")
	fs.StringVar(&a.binding, "binding", "", "JSONRPC, HTTP+JSON or GRPC")
	fs.StringVar(&a.scenario, "scenario", "", "the scenario to run")
	fs.StringVar(&a.webhookURL, "webhook-url", "", "where push configs point")
	fs.StringVar(&a.tenant, "tenant", "", "tenant for every call")
	timeout := fs.Float64("timeout", 30, "seconds for the scenario")
	_ = fs.Parse(argv)
	if a.cardURL == "" || a.binding == "" || a.scenario == "" {
		usage("--card-url, --binding and --scenario are required")
	}
	oneOf(a.binding, bindings, "binding")
	oneOf(a.scenario, scenarios, "scenario")
	a.timeout = seconds(*timeout)
	return a
}

// viaCLI: this binary runs as `a2a-cli-peer` (cli.go) when it has that name.
func viaCLI() bool { return strings.HasPrefix(filepath.Base(os.Args[0]), "a2a-cli-peer") }

func main() {
	if len(os.Args) < 2 {
		usage("first argument must be agent or client")
	}
	agent, client := serve, clientMain
	if viaCLI() {
		agent, client = cliServe, cliClientMain
	}
	switch os.Args[1] {
	case "agent":
		if err := agent(parseAgent(os.Args[2:])); err != nil {
			fmt.Fprintf(os.Stderr, "%s agent: %v\n", filepath.Base(os.Args[0]), err)
			os.Exit(1)
		}
	case "client":
		os.Exit(client(parseClient(os.Args[2:])))
	default:
		usage("first argument must be agent or client")
	}
}
