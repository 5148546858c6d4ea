package peer;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;

import io.a2a.server.ServerCallContext;
import io.a2a.server.util.sse.SseFormatter;
import io.a2a.spec.InternalError;
import io.a2a.spec.InvalidParamsError;
import io.a2a.spec.MethodNotFoundError;
import io.a2a.spec.TransportProtocol;
import io.a2a.transport.rest.handler.RestHandler;
import io.a2a.transport.rest.handler.RestHandler.HTTPRestResponse;
import io.a2a.transport.rest.handler.RestHandler.HTTPRestStreamingResponse;

/**
 * HTTP+JSON under {@code /a2a/rest}, with an optional tenant segment first. The routes follow
 * the SDK's own Quarkus server (trailing slash allowed on the push-config list, subscribe by GET
 * or POST); what each answers is the SDK's RestHandler.
 */
final class RestRoute implements HttpHandler {
    private static final String TENANT = "(?:/(?<tenant>[^/]+))?";
    private static final String TASK = "/tasks/(?<task>[^/:]+)";

    private final RestHandler rest;
    private final List<Route> routes;

    RestRoute(RestHandler rest) {
        this.rest = rest;
        this.routes = List.of(
                route("POST", "/message:send", (ex, c, t, m) -> rest.sendMessage(c, t, Exchanges.body(ex))),
                route("POST", "/message:stream",
                        (ex, c, t, m) -> rest.sendStreamingMessage(c, t, Exchanges.body(ex))),
                route("GET", "/tasks/?", (ex, c, t, m) -> listTasks(ex, c, t)),
                route("GET", TASK, (ex, c, t, m) -> rest.getTask(c, t, m.group("task"),
                        intParam(Exchanges.query(ex), "historyLength"))),
                route("POST", TASK + ":cancel", (ex, c, t, m) -> rest.cancelTask(c, t, m.group("task"))),
                route("GET|POST", TASK + ":subscribe",
                        (ex, c, t, m) -> rest.subscribeToTask(c, t, m.group("task"))),
                route("POST", TASK + "/pushNotificationConfigs", (ex, c, t, m) ->
                        rest.createTaskPushNotificationConfiguration(c, t, Exchanges.body(ex), m.group("task"))),
                route("GET", TASK + "/pushNotificationConfigs/(?<cfg>[^/]+)", (ex, c, t, m) ->
                        rest.getTaskPushNotificationConfiguration(c, t, m.group("task"), m.group("cfg"))),
                route("GET", TASK + "/pushNotificationConfigs/?", (ex, c, t, m) -> listConfigs(ex, c, t, m)),
                route("DELETE", TASK + "/pushNotificationConfigs/(?<cfg>[^/]+)", (ex, c, t, m) ->
                        rest.deleteTaskPushNotificationConfiguration(c, t, m.group("task"), m.group("cfg"))),
                route("GET", "/extendedAgentCard", (ex, c, t, m) -> rest.getExtendedAgentCard(c, t)));
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath().substring(Cards.REST_PATH.length());
        for (Route route : routes) {
            Matcher m = route.pattern.matcher(path);
            if (m.matches() && ex.getRequestMethod().matches(route.methods)) {
                String tenant = m.group("tenant") == null ? "" : m.group("tenant");
                ServerCallContext ctx = Exchanges.context(ex, tenant, TransportProtocol.HTTP_JSON, null);
                answer(ex, ctx, call(route, ex, ctx, tenant, m));
                return;
            }
        }
        answer(ex, null, rest.createErrorResponse(new MethodNotFoundError()));
    }

    private HTTPRestResponse call(Route route, HttpExchange ex, ServerCallContext ctx,
            String tenant, Matcher m) {
        try {
            return route.action.call(ex, ctx, tenant, m);
        } catch (NumberFormatException e) {
            return rest.createErrorResponse(new InvalidParamsError("Invalid number format in parameters"));
        } catch (Exception e) {
            return rest.createErrorResponse(new InternalError(e.getMessage()));
        }
    }

    private static void answer(HttpExchange ex, ServerCallContext ctx, HTTPRestResponse response)
            throws IOException {
        if (response instanceof HTTPRestStreamingResponse stream) {
            Exchanges.stream(ex, stream.getPublisher(), SseFormatter::formatJsonAsSSE, ctx);
        } else {
            Exchanges.send(ex, response.getStatusCode(), response.getContentType(), response.getBody());
        }
    }

    private HTTPRestResponse listTasks(HttpExchange ex, ServerCallContext ctx, String tenant) {
        Map<String, String> q = Exchanges.query(ex);
        String status = q.get("status");
        return rest.listTasks(ctx, tenant, q.get("contextId"),
                status == null || status.isEmpty() ? null : status.toUpperCase(),
                intParam(q, "pageSize"), q.get("pageToken"), intParam(q, "historyLength"),
                q.get("statusTimestampAfter"),
                q.containsKey("includeArtifacts") ? Boolean.valueOf(q.get("includeArtifacts")) : null);
    }

    private HTTPRestResponse listConfigs(HttpExchange ex, ServerCallContext ctx, String tenant,
            Matcher m) {
        Map<String, String> q = Exchanges.query(ex);
        Integer pageSize = intParam(q, "pageSize");
        return rest.listTaskPushNotificationConfigurations(ctx, tenant, m.group("task"),
                pageSize == null ? 0 : pageSize, q.getOrDefault("pageToken", ""));
    }

    private static Integer intParam(Map<String, String> q, String name) {
        String v = q.get(name);
        return v == null || v.isEmpty() ? null : Integer.valueOf(v);
    }

    private static Route route(String methods, String path, Action action) {
        return new Route(methods, Pattern.compile("^" + TENANT + path + "$"), action);
    }

    private record Route(String methods, Pattern pattern, Action action) {
    }

    @FunctionalInterface
    private interface Action {
        HTTPRestResponse call(HttpExchange ex, ServerCallContext ctx, String tenant, Matcher m)
                throws IOException;
    }
}
