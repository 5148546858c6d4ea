package peer;

import io.a2a.server.TransportMetadata;
import io.a2a.spec.TransportProtocol;

/**
 * The transports our server serves, declared to the SDK through ServiceLoader
 * (META-INF/services/io.a2a.server.TransportMetadata) as its Quarkus servers do: the SDK's
 * handlers refuse a card that names a transport nobody declared.
 */
public final class ServedTransports {
    private ServedTransports() {
    }

    /** JSON-RPC at /a2a/jsonrpc. */
    public static final class JsonRpc implements TransportMetadata {
        @Override
        public String getTransportProtocol() {
            return TransportProtocol.JSONRPC.asString();
        }
    }

    /** HTTP+JSON at /a2a/rest. */
    public static final class Rest implements TransportMetadata {
        @Override
        public String getTransportProtocol() {
            return TransportProtocol.HTTP_JSON.asString();
        }
    }

    /** gRPC on its own port. */
    public static final class Grpc implements TransportMetadata {
        @Override
        public String getTransportProtocol() {
            return TransportProtocol.GRPC.asString();
        }
    }
}
