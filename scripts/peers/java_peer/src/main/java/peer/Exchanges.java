package peer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

import com.sun.net.httpserver.HttpExchange;

import io.a2a.common.A2AHeaders;
import io.a2a.server.ServerCallContext;
import io.a2a.server.auth.UnauthenticatedUser;
import io.a2a.server.extensions.A2AExtensions;

/**
 * The HTTP side of our small server (JDK {@code com.sun.net.httpserver}): bodies, plain
 * answers, SSE streams, and the SDK's per-call context. The SDK's handlers decide what is
 * said; this class only puts it on the socket.
 */
final class Exchanges {
    static final String JSON = "application/json";

    private Exchanges() {
    }

    static String body(HttpExchange ex) throws IOException {
        return new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    }

    static void send(HttpExchange ex, int status, String contentType, String body)
            throws IOException {
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        if (contentType != null) {
            ex.getResponseHeaders().set("Content-Type", contentType);
        }
        boolean empty = bytes.length == 0 || status == 204 || status == 304;
        ex.sendResponseHeaders(status, empty ? -1 : bytes.length);
        if (!empty) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
        ex.close();
    }

    /**
     * Write each item of {@code items}, formatted as one SSE event by {@code format} (item,
     * event number from 0), until the publisher completes or the client goes away.
     */
    static <T> void stream(HttpExchange ex, Flow.Publisher<T> items,
            BiFunction<T, Long, String> format, ServerCallContext context) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = ex.getResponseBody();
        CompletableFuture<Void> done = new CompletableFuture<>();
        items.subscribe(new SseWriter<>(out, format, context, done));
        done.join();
        try {
            out.close();
        } catch (IOException gone) {
            // the client closed first; nothing left to say
        }
        ex.close();
    }

    /** The SDK's call context: headers, tenant, transport, X-A2A-Version and extensions. */
    static ServerCallContext context(HttpExchange ex, String tenant, Object transport,
            String method) {
        Map<String, Object> state = new HashMap<>();
        Map<String, String> headers = new HashMap<>();
        ex.getRequestHeaders().forEach((k, v) -> headers.put(k, String.join(",", v)));
        state.put("headers", headers);
        state.put("tenant", tenant);
        state.put("transport", transport);
        if (method != null) {
            state.put("method", method);
        }
        String version = ex.getRequestHeaders().getFirst(A2AHeaders.X_A2A_VERSION);
        List<String> ext = ex.getRequestHeaders().get(A2AHeaders.X_A2A_EXTENSIONS);
        return new ServerCallContext(UnauthenticatedUser.INSTANCE, state,
                A2AExtensions.getRequestedExtensions(ext == null ? List.of() : ext), version);
    }

    static Map<String, String> query(HttpExchange ex) {
        Map<String, String> params = new HashMap<>();
        String raw = ex.getRequestURI().getRawQuery();
        if (raw == null || raw.isEmpty()) {
            return params;
        }
        for (String pair : raw.split("&")) {
            String[] kv = pair.split("=", 2);
            params.put(decode(kv[0]), kv.length > 1 ? decode(kv[1]) : "");
        }
        return params;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** Writes one SSE event per item, asking for the next only once it is on the socket. */
    private static final class SseWriter<T> implements Flow.Subscriber<T> {
        private final OutputStream out;
        private final BiFunction<T, Long, String> format;
        private final ServerCallContext context;
        private final CompletableFuture<Void> done;
        private final AtomicLong eventId = new AtomicLong();
        private Flow.Subscription subscription;

        SseWriter(OutputStream out, BiFunction<T, Long, String> format,
                ServerCallContext context, CompletableFuture<Void> done) {
            this.out = out;
            this.format = format;
            this.context = context;
            this.done = done;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(1);
        }

        @Override
        public void onNext(T item) {
            try {
                out.write(format.apply(item, eventId.getAndIncrement())
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                subscription.request(1);
            } catch (IOException gone) {
                subscription.cancel();
                context.invokeEventConsumerCancelCallback();
                done.complete(null);
            }
        }

        @Override
        public void onError(Throwable error) {
            System.err.println("java_peer: stream failed: " + error);
            done.complete(null);
        }

        @Override
        public void onComplete() {
            done.complete(null);
        }
    }
}
