package peer;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.google.gson.GsonBuilder;
import com.sun.net.httpserver.HttpServer;

import io.a2a.jsonrpc.common.json.JsonUtil;
import io.a2a.server.events.InMemoryQueueManager;
import io.a2a.server.events.MainEventBus;
import io.a2a.server.events.MainEventBusProcessor;
import io.a2a.server.requesthandlers.DefaultRequestHandler;
import io.a2a.server.requesthandlers.RequestHandler;
import io.a2a.server.tasks.BasePushNotificationSender;
import io.a2a.server.tasks.InMemoryPushNotificationConfigStore;
import io.a2a.server.tasks.InMemoryTaskStore;
import io.a2a.spec.AgentCard;
import io.a2a.transport.grpc.handler.CallContextFactory;
import io.a2a.transport.grpc.handler.GrpcHandler;
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler;
import io.a2a.transport.rest.handler.RestHandler;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;

/**
 * The peer agent: the SDK's DefaultRequestHandler and its framework-neutral JSON-RPC, REST and
 * gRPC handlers, wired by hand (the SDK wires them with CDI in its Quarkus servers, which Maven
 * Central does not serve at this version), on a JDK HttpServer and a Netty gRPC server, both
 * bound to 127.0.0.1.
 *
 * <p>Push: the SDK's BasePushNotificationSender with its default JDK HTTP client. At 1.0.0.Alpha3
 * it posts to any URL, loopback included; the private-network guard of GHSA-q78c-5jjq-57g8
 * (PushNotificationUrlValidator) came in a later release, which would need its switch here.
 */
final class Agent {
    private Agent() {
    }

    static void serve(int port, int grpcPort, double delay) throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool(daemon());
        HttpServer http = HttpServer.create(new InetSocketAddress(Cards.HOST, port), 128);
        Integer realGrpc = grpcPort < 0 ? null : grpcPort == 0 ? freePort() : grpcPort;
        Map<String, Object> urls = Cards.urls(http.getAddress().getPort(), realGrpc);
        AgentCard card = Cards.publicCard(urls);
        AgentCard extended = Cards.extendedCard(card);
        RequestHandler handler = requestHandler(delay, pool);
        Server grpc = null;
        if (realGrpc != null) {
            grpc = NettyServerBuilder.forAddress(new InetSocketAddress(Cards.HOST, realGrpc))
                    .addService(ServerInterceptors.intercept(
                            grpcHandler(handler, card, extended, pool), new GrpcContext()))
                    .executor(pool)
                    .build()
                    .start();
        }
        JSONRPCHandler jsonrpc = new JSONRPCHandler(card, new FixedInstance<>(extended), handler, pool);
        RestHandler rest = new RestHandler(card, new FixedInstance<>(extended), handler, pool);
        String cardJson = JsonUtil.toJson(card);
        http.createContext(Cards.CARD_PATH, ex -> Exchanges.send(ex, 200, Exchanges.JSON, cardJson));
        http.createContext(Cards.JSONRPC_PATH, new JsonRpcRoute(jsonrpc));
        http.createContext(Cards.REST_PATH, new RestRoute(rest));
        http.setExecutor(pool);
        http.start();
        ready(urls);
        awaitSigterm(http, grpc);
    }

    /** A free port on 127.0.0.1 (bound and released), so the card can name it before start. */
    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName(Cards.HOST))) {
            return probe.getLocalPort();
        }
    }

    private static RequestHandler requestHandler(double delay, ExecutorService pool)
            throws ReflectiveOperationException {
        InMemoryTaskStore tasks = new InMemoryTaskStore();
        InMemoryPushNotificationConfigStore configs = new InMemoryPushNotificationConfigStore();
        MainEventBus bus = new MainEventBus();
        InMemoryQueueManager queues = new InMemoryQueueManager(tasks, bus);
        MainEventBusProcessor processor = new MainEventBusProcessor(bus, tasks,
                new BasePushNotificationSender(configs), queues);
        // start() is the CDI @PostConstruct hook (package-private); without CDI we call it.
        Method start = MainEventBusProcessor.class.getDeclaredMethod("start");
        start.setAccessible(true);
        start.invoke(processor);
        return DefaultRequestHandler.create(new PeerExecutor(delay), tasks, queues, configs,
                processor, pool, pool);
    }

    private static GrpcHandler grpcHandler(RequestHandler handler, AgentCard card,
            AgentCard extended, ExecutorService pool) {
        return new GrpcHandler() {
            @Override
            protected RequestHandler getRequestHandler() {
                return handler;
            }

            @Override
            protected AgentCard getAgentCard() {
                return card;
            }

            @Override
            protected AgentCard getExtendedAgentCard() {
                return extended;
            }

            @Override
            protected CallContextFactory getCallContextFactory() {
                return null; // the SDK's default context, fed by GrpcContext
            }

            @Override
            protected java.util.concurrent.Executor getExecutor() {
                return pool;
            }
        };
    }

    private static void ready(Map<String, Object> urls) {
        Map<String, Object> info = new java.util.TreeMap<>(urls);
        info.put("sdk", Sdk.NAME);
        info.put("sdk_version", Sdk.VERSION);
        System.out.println("READY " + new GsonBuilder().serializeNulls().create().toJson(info));
        System.out.flush();
    }

    private static void awaitSigterm(HttpServer http, Server grpc) throws InterruptedException {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            http.stop(0);
            if (grpc != null) {
                grpc.shutdownNow();
            }
        }));
        new CountDownLatch(1).await(); // until SIGTERM runs the hook and the JVM exits
    }

    private static java.util.concurrent.ThreadFactory daemon() {
        return r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        };
    }
}
