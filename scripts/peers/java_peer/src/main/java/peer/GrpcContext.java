package peer;

import io.a2a.common.A2AHeaders;
import io.a2a.transport.grpc.context.GrpcContextKeys;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

/**
 * Puts each call's metadata where the SDK's GrpcHandler looks for it (GrpcContextKeys): the
 * handler reads the headers, the method name and X-A2A-Version from the gRPC Context and fails
 * without them. The SDK's Quarkus server does the same with its own interceptor.
 */
final class GrpcContext implements ServerInterceptor {
    private static final Metadata.Key<String> VERSION =
            Metadata.Key.of(A2AHeaders.X_A2A_VERSION, Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> EXTENSIONS =
            Metadata.Key.of(A2AHeaders.X_A2A_EXTENSIONS, Metadata.ASCII_STRING_MARSHALLER);

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        String bare = call.getMethodDescriptor().getBareMethodName();
        Context ctx = Context.current()
                .withValue(GrpcContextKeys.METADATA_KEY, headers)
                .withValue(GrpcContextKeys.GRPC_METHOD_NAME_KEY,
                        call.getMethodDescriptor().getFullMethodName())
                .withValue(GrpcContextKeys.METHOD_NAME_KEY,
                        GrpcContextKeys.METHOD_MAPPING.get(bare));
        if (headers.get(VERSION) != null) {
            ctx = ctx.withValue(GrpcContextKeys.VERSION_HEADER_KEY, headers.get(VERSION));
        }
        if (headers.get(EXTENSIONS) != null) {
            ctx = ctx.withValue(GrpcContextKeys.EXTENSIONS_HEADER_KEY, headers.get(EXTENSIONS));
        }
        return Contexts.interceptCall(ctx, call, headers, next);
    }
}
