package peer;

import java.net.URI;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

import io.a2a.client.Client;
import io.a2a.client.ClientBuilder;
import io.a2a.client.ClientEvent;
import io.a2a.client.MessageEvent;
import io.a2a.client.TaskEvent;
import io.a2a.client.TaskUpdateEvent;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.http.A2ACardResolver;
import io.a2a.client.http.JdkA2AHttpClient;
import io.a2a.client.transport.grpc.GrpcTransport;
import io.a2a.client.transport.grpc.GrpcTransportConfigBuilder;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig;
import io.a2a.client.transport.rest.RestTransport;
import io.a2a.client.transport.rest.RestTransportConfig;
import io.a2a.spec.A2AError;
import io.a2a.spec.AgentCard;
import io.a2a.spec.Message;
import io.a2a.spec.MessageSendConfiguration;
import io.a2a.spec.MessageSendParams;
import io.a2a.spec.Part;
import io.a2a.spec.PushNotificationConfig;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;

/** One scenario run: the SDK's clients on one binding, and helpers to name what they saw. */
final class PeerClient {
    final Main.ClientArgs args;
    final Summary summary;
    final String contextId = UUID.randomUUID().toString();
    String tenant;
    private AgentCard card;
    private final List<Client> clients = new ArrayList<>();
    private final Map<Client, Boolean> streaming = new IdentityHashMap<>();
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();

    PeerClient(Main.ClientArgs args, Summary summary) {
        this.args = args;
        this.summary = summary;
        this.tenant = args.tenant() == null ? "" : args.tenant();
    }

    AgentCard resolveCard() throws Exception {
        URI uri = URI.create(args.cardUrl());
        String base = uri.getScheme() + "://" + uri.getRawAuthority();
        card = new A2ACardResolver(new JdkA2AHttpClient(), base, null, uri.getRawPath()).getAgentCard();
        return card;
    }

    Client client(boolean streaming) throws Exception {
        return client(streaming, args.binding());
    }

    Client client(boolean streaming, String binding) throws Exception {
        AgentCard agentCard = card != null ? card : resolveCard();
        ClientBuilder builder = Client.builder(agentCard).clientConfig(new ClientConfig.Builder()
                .setStreaming(streaming).setUseClientPreference(true).build());
        switch (binding) {
            case "JSONRPC" -> builder.withTransport(JSONRPCTransport.class, new JSONRPCTransportConfig());
            case "HTTP+JSON" -> builder.withTransport(RestTransport.class, new RestTransportConfig());
            default -> builder.withTransport(GrpcTransport.class,
                    new GrpcTransportConfigBuilder().channelFactory(this::channel));
        }
        Client client = builder.build();
        clients.add(client);
        this.streaming.put(client, streaming);
        return client;
    }

    private ManagedChannel channel(String target) {
        ManagedChannel channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        channels.add(channel);
        return channel;
    }

    void close() {
        for (Client c : clients) {
            try {
                c.close();
            } catch (RuntimeException ignored) {
                // closing is best effort; the summary is what matters
            }
        }
        channels.forEach(ManagedChannel::shutdownNow);
    }

    Message message(String text) {
        return Message.builder().messageId(UUID.randomUUID().toString())
                .role(Message.Role.ROLE_USER).contextId(contextId)
                .parts(List.<Part<?>>of(new TextPart(text))).build();
    }

    /** SendMessage params; blocking unless {@code returnImmediately}, with an optional push. */
    MessageSendParams params(String text, boolean returnImmediately, PushNotificationConfig push) {
        MessageSendConfiguration cfg = MessageSendConfiguration.builder()
                .blocking(!returnImmediately).pushNotificationConfig(push).build();
        return MessageSendParams.builder().message(message(text)).configuration(cfg)
                .tenant(tenant).build();
    }

    /** A send (streaming or not, as the client is) and every event it delivered. */
    Sent send(Client c, MessageSendParams params, String call) throws Exception {
        Events events = new Events();
        c.sendMessage(params, List.of(events), events::end, null);
        if (!streaming.getOrDefault(c, false)) {
            events.end(null); // a plain send returns once its one event is consumed
        }
        events.await();
        List<String> names = events.names();
        summary.step(call, "events", names, "state", nonEmpty(terminal(names)));
        return new Sent(names, events.task);
    }

    record Sent(List<String> events, Task task) {
    }

    /**
     * Collects the events of one call. The JSON-RPC and REST transports end a stream by calling
     * the error handler with null; the gRPC transport never signals the end (its stream
     * observer's onCompleted does nothing at 1.0.0.Alpha3), so a final state ends it too.
     */
    static final class Events implements BiConsumer<ClientEvent, AgentCard> {
        final List<String> names = new CopyOnWriteArrayList<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final CompletableFuture<Void> first = new CompletableFuture<>();
        volatile Task task;

        @Override
        public void accept(ClientEvent event, AgentCard card) {
            names.add(name(event));
            if (event instanceof TaskEvent t) {
                task = t.getTask();
            } else if (event instanceof TaskUpdateEvent u) {
                task = u.getTask();
            }
            first.complete(null);
            if (event instanceof MessageEvent || isFinal(event)) {
                done.complete(null);
            }
        }

        void end(Throwable error) {
            if (error == null) {
                done.complete(null);
            } else {
                done.completeExceptionally(error);
            }
        }

        void await() throws Exception {
            try {
                done.get();
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause() instanceof Exception ex ? ex : e;
            }
        }

        List<String> names() {
            return List.copyOf(names);
        }

        private static boolean isFinal(ClientEvent event) {
            if (event instanceof TaskEvent t) {
                return t.getTask().status().state().isFinal();
            }
            return event instanceof TaskUpdateEvent u
                    && u.getUpdateEvent() instanceof TaskStatusUpdateEvent s
                    && s.status().state().isFinal();
        }
    }

    static String name(ClientEvent event) {
        if (event instanceof MessageEvent m) {
            return "message:" + String.join("", texts(m.getMessage().parts()));
        }
        if (event instanceof TaskEvent t) {
            return "task:" + state(t.getTask().status().state());
        }
        TaskUpdateEvent u = (TaskUpdateEvent) event;
        if (u.getUpdateEvent() instanceof TaskStatusUpdateEvent s) {
            return "status:" + state(s.status().state());
        }
        TaskArtifactUpdateEvent a = (TaskArtifactUpdateEvent) u.getUpdateEvent();
        return "artifact:" + String.join("", texts(a.artifact().parts()));
    }

    static String state(TaskState state) {
        return state.name().replaceFirst("^TASK_STATE_", "").toLowerCase().replace('_', '-');
    }

    static List<String> texts(List<Part<?>> parts) {
        List<String> out = new ArrayList<>();
        for (Part<?> p : parts == null ? List.<Part<?>>of() : parts) {
            if (p instanceof TextPart t) {
                out.add(t.text());
            }
        }
        return out;
    }

    static List<String> artifactTexts(Task task) {
        List<String> out = new ArrayList<>();
        if (task.artifacts() != null) {
            task.artifacts().forEach(a -> out.addAll(texts(a.parts())));
        }
        return out;
    }

    static String terminal(List<String> events) {
        String last = "";
        for (String e : events) {
            if (e.startsWith("task:") || e.startsWith("status:")) {
                last = e.split(":", 2)[1];
            }
        }
        return last;
    }

    static String nonEmpty(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /** The A2A error class in the cause chain (TaskNotFoundError, ...), else the class. */
    static String errorName(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof A2AError) {
                return t.getClass().getSimpleName();
            }
        }
        return e.getClass().getSimpleName();
    }
}
