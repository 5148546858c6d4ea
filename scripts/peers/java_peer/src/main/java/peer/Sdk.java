package peer;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The SDK's name and version as the summaries and the READY line report them. */
final class Sdk {
    static final String NAME = "a2a-java";
    static final String VERSION = version();
    private static final String POM_PROPERTIES =
            "/META-INF/maven/io.github.a2asdk/a2a-java-sdk-spec/pom.properties";

    private Sdk() {
    }

    /** Read from the SDK jar on the classpath, so it is the version really loaded. */
    private static String version() {
        try (InputStream in = io.a2a.spec.AgentCard.class.getResourceAsStream(POM_PROPERTIES)) {
            if (in == null) {
                return "unknown";
            }
            Properties props = new Properties();
            props.load(in);
            return props.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
