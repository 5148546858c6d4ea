package peer;

import java.io.IOException;
import java.util.concurrent.Flow;

import com.google.gson.JsonSyntaxException;
import com.google.protobuf.Empty;
import com.google.protobuf.MessageOrBuilder;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;

import io.a2a.grpc.utils.JSONRPCUtils;
import io.a2a.grpc.utils.ProtoUtils.ToProto;
import io.a2a.jsonrpc.common.json.IdJsonMappingException;
import io.a2a.jsonrpc.common.json.InvalidParamsJsonMappingException;
import io.a2a.jsonrpc.common.json.JsonMappingException;
import io.a2a.jsonrpc.common.json.JsonProcessingException;
import io.a2a.jsonrpc.common.json.MethodNotFoundJsonMappingException;
import io.a2a.jsonrpc.common.wrappers.A2AErrorResponse;
import io.a2a.jsonrpc.common.wrappers.A2ARequest;
import io.a2a.jsonrpc.common.wrappers.A2AResponse;
import io.a2a.jsonrpc.common.wrappers.CancelTaskRequest;
import io.a2a.jsonrpc.common.wrappers.CancelTaskResponse;
import io.a2a.jsonrpc.common.wrappers.CreateTaskPushNotificationConfigRequest;
import io.a2a.jsonrpc.common.wrappers.CreateTaskPushNotificationConfigResponse;
import io.a2a.jsonrpc.common.wrappers.DeleteTaskPushNotificationConfigRequest;
import io.a2a.jsonrpc.common.wrappers.DeleteTaskPushNotificationConfigResponse;
import io.a2a.jsonrpc.common.wrappers.GetExtendedAgentCardRequest;
import io.a2a.jsonrpc.common.wrappers.GetExtendedAgentCardResponse;
import io.a2a.jsonrpc.common.wrappers.GetTaskPushNotificationConfigRequest;
import io.a2a.jsonrpc.common.wrappers.GetTaskPushNotificationConfigResponse;
import io.a2a.jsonrpc.common.wrappers.GetTaskRequest;
import io.a2a.jsonrpc.common.wrappers.GetTaskResponse;
import io.a2a.jsonrpc.common.wrappers.ListTaskPushNotificationConfigRequest;
import io.a2a.jsonrpc.common.wrappers.ListTaskPushNotificationConfigResponse;
import io.a2a.jsonrpc.common.wrappers.ListTasksRequest;
import io.a2a.jsonrpc.common.wrappers.ListTasksResponse;
import io.a2a.jsonrpc.common.wrappers.NonStreamingJSONRPCRequest;
import io.a2a.jsonrpc.common.wrappers.SendMessageRequest;
import io.a2a.jsonrpc.common.wrappers.SendMessageResponse;
import io.a2a.jsonrpc.common.wrappers.SendStreamingMessageRequest;
import io.a2a.jsonrpc.common.wrappers.SendStreamingMessageResponse;
import io.a2a.jsonrpc.common.wrappers.SubscribeToTaskRequest;
import io.a2a.server.ServerCallContext;
import io.a2a.server.util.sse.SseFormatter;
import io.a2a.spec.A2AError;
import io.a2a.spec.InternalError;
import io.a2a.spec.InvalidParamsError;
import io.a2a.spec.InvalidRequestError;
import io.a2a.spec.JSONParseError;
import io.a2a.spec.MethodNotFoundError;
import io.a2a.spec.TransportProtocol;
import io.a2a.spec.UnsupportedOperationError;
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler;

/**
 * JSON-RPC at {@code /a2a/jsonrpc} and {@code /a2a/jsonrpc/{tenant}} (the SDK's client puts the
 * tenant in the path). Parsing, dispatch and serialisation are the SDK's (JSONRPCUtils,
 * JSONRPCHandler, SseFormatter); this class connects them to the JDK server.
 */
final class JsonRpcRoute implements HttpHandler {
    private final JSONRPCHandler handler;

    JsonRpcRoute(JSONRPCHandler handler) {
        this.handler = handler;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        if (!ex.getRequestMethod().equals("POST")) {
            Exchanges.send(ex, 405, null, null);
            return;
        }
        String tenant = tenant(ex.getRequestURI().getPath());
        ServerCallContext context = Exchanges.context(ex, tenant, TransportProtocol.JSONRPC, null);
        A2AResponse<?> answer;
        try {
            A2ARequest<?> request = JSONRPCUtils.parseRequestBody(Exchanges.body(ex), tenant);
            context.getState().put("method", request.getMethod());
            if (!(request instanceof NonStreamingJSONRPCRequest<?> plain)) {
                Exchanges.stream(ex, streaming(request, context),
                        SseFormatter::formatResponseAsSSE, context);
                return;
            }
            answer = dispatch(plain, context);
        } catch (A2AError e) {
            answer = new A2AErrorResponse(e);
        } catch (Exception e) {
            answer = parseError(e);
        }
        Exchanges.send(ex, 200, Exchanges.JSON, serialize(answer));
    }

    /** What the path says after /a2a/jsonrpc, without slashes ("" when nothing). */
    static String tenant(String path) {
        String rest = path.substring(Math.min(path.length(), Cards.JSONRPC_PATH.length()));
        return rest.replaceAll("^/+|/+$", "");
    }

    private static A2AResponse<?> parseError(Exception e) {
        if (e instanceof InvalidParamsJsonMappingException m) {
            return new A2AErrorResponse(m.getId(), new InvalidParamsError(null, e.getMessage(), null));
        }
        if (e instanceof MethodNotFoundJsonMappingException m) {
            return new A2AErrorResponse(m.getId(), new MethodNotFoundError(null, e.getMessage(), null));
        }
        if (e instanceof IdJsonMappingException m) {
            return new A2AErrorResponse(m.getId(), new InvalidRequestError(null, e.getMessage(), null));
        }
        if (e instanceof JsonMappingException) {
            return new A2AErrorResponse(new InvalidRequestError(null, e.getMessage(), null));
        }
        if (e instanceof JsonSyntaxException || e instanceof JsonProcessingException) {
            return new A2AErrorResponse(new JSONParseError(e.getMessage()));
        }
        return new A2AErrorResponse(new InternalError(e.getMessage()));
    }

    private A2AResponse<?> dispatch(NonStreamingJSONRPCRequest<?> request, ServerCallContext ctx) {
        if (request instanceof GetTaskRequest r) {
            return handler.onGetTask(r, ctx);
        } else if (request instanceof CancelTaskRequest r) {
            return handler.onCancelTask(r, ctx);
        } else if (request instanceof ListTasksRequest r) {
            return handler.onListTasks(r, ctx);
        } else if (request instanceof CreateTaskPushNotificationConfigRequest r) {
            return handler.setPushNotificationConfig(r, ctx);
        } else if (request instanceof GetTaskPushNotificationConfigRequest r) {
            return handler.getPushNotificationConfig(r, ctx);
        } else if (request instanceof ListTaskPushNotificationConfigRequest r) {
            return handler.listPushNotificationConfig(r, ctx);
        } else if (request instanceof DeleteTaskPushNotificationConfigRequest r) {
            return handler.deletePushNotificationConfig(r, ctx);
        } else if (request instanceof SendMessageRequest r) {
            return handler.onMessageSend(r, ctx);
        } else if (request instanceof GetExtendedAgentCardRequest r) {
            return handler.onGetExtendedCardRequest(r, ctx);
        }
        return new A2AErrorResponse(request.getId(), new UnsupportedOperationError());
    }

    private Flow.Publisher<SendStreamingMessageResponse> streaming(A2ARequest<?> request,
            ServerCallContext ctx) {
        if (request instanceof SendStreamingMessageRequest r) {
            return handler.onMessageSendStream(r, ctx);
        } else if (request instanceof SubscribeToTaskRequest r) {
            return handler.onSubscribeToTask(r, ctx);
        }
        throw new UnsupportedOperationError();
    }

    static String serialize(A2AResponse<?> response) {
        if (response instanceof A2AErrorResponse error) {
            return JSONRPCUtils.toJsonRPCErrorResponse(error.getId(), error.getError());
        }
        if (response.getError() != null) {
            return JSONRPCUtils.toJsonRPCErrorResponse(response.getId(), response.getError());
        }
        return JSONRPCUtils.toJsonRPCResultResponse(response.getId(), result(response));
    }

    private static MessageOrBuilder result(A2AResponse<?> response) {
        if (response instanceof GetTaskResponse r) {
            return ToProto.task(r.getResult());
        } else if (response instanceof CancelTaskResponse r) {
            return ToProto.task(r.getResult());
        } else if (response instanceof SendMessageResponse r) {
            return ToProto.taskOrMessage(r.getResult());
        } else if (response instanceof ListTasksResponse r) {
            return ToProto.listTasksResult(r.getResult());
        } else if (response instanceof CreateTaskPushNotificationConfigResponse r) {
            return ToProto.createTaskPushNotificationConfigResponse(r.getResult());
        } else if (response instanceof GetTaskPushNotificationConfigResponse r) {
            return ToProto.getTaskPushNotificationConfigResponse(r.getResult());
        } else if (response instanceof ListTaskPushNotificationConfigResponse r) {
            return ToProto.listTaskPushNotificationConfigResponse(r.getResult());
        } else if (response instanceof DeleteTaskPushNotificationConfigResponse) {
            return Empty.getDefaultInstance();
        } else if (response instanceof GetExtendedAgentCardResponse r) {
            return ToProto.getExtendedCardResponse(r.getResult());
        }
        throw new IllegalArgumentException("unknown response " + response.getClass().getName());
    }
}
