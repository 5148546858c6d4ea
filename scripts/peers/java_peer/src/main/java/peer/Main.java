package peer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java A2A peer for a2a-recorder: {@code agent} or {@code client}, with the command line that
 * every peer follows (see scripts/peers/run.py).
 */
public final class Main {
    static final Set<String> BINDINGS = Set.of("JSONRPC", "HTTP+JSON", "GRPC");
    static final List<String> SCENARIOS = List.of("01-agent-card", "03-blocking-task",
            "04-polling", "05-streaming", "06-subscribe", "07-cancel", "08-push-configs",
            "09-list-tasks", "10-extended-card", "11-errors", "12-tenant", "16-rest-binding");

    private Main() {
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) {
            usage("first argument must be agent or client");
        }
        Map<String, String> opts = options(argv);
        if (argv[0].equals("agent")) {
            Agent.serve(intOpt(opts, "port", 0), intOpt(opts, "grpc-port", 0),
                    Double.parseDouble(opts.getOrDefault("delay", "0.05")));
        } else if (argv[0].equals("client")) {
            System.exit(ClientMain.run(clientArgs(opts)));
        } else {
            usage("first argument must be agent or client");
        }
    }

    private static Map<String, String> options(String[] argv) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < argv.length; i += 2) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                usage("bad argument " + argv[i]);
            }
            opts.put(argv[i].substring(2), argv[i + 1]);
        }
        return opts;
    }

    private static ClientArgs clientArgs(Map<String, String> opts) {
        for (String key : List.of("card-url", "binding", "scenario")) {
            if (!opts.containsKey(key)) {
                usage("--" + key + " is required");
            }
        }
        if (!BINDINGS.contains(opts.get("binding"))) {
            usage("--binding must be one of " + BINDINGS);
        }
        if (!SCENARIOS.contains(opts.get("scenario"))) {
            usage("--scenario must be one of " + SCENARIOS);
        }
        return new ClientArgs(opts.get("card-url"), opts.get("binding"), opts.get("scenario"),
                opts.get("webhook-url"), opts.get("tenant"),
                Double.parseDouble(opts.getOrDefault("timeout", "30")));
    }

    private static int intOpt(Map<String, String> opts, String key, int fallback) {
        return opts.containsKey(key) ? Integer.parseInt(opts.get(key)) : fallback;
    }

    private static void usage(String why) {
        System.err.println("java_peer: " + why);
        System.err.println("usage: java_peer agent --port P [--grpc-port G] [--delay S]");
        System.err.println("       java_peer client --card-url URL --binding B --scenario S"
                + " [--webhook-url U] [--tenant T] [--timeout S]");
        System.exit(2);
    }

    /** What {@code client} was asked to do. */
    record ClientArgs(String cardUrl, String binding, String scenario, String webhookUrl,
            String tenant, double timeout) {
    }
}
