package peer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.a2a.spec.AgentCapabilities;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentInterface;
import io.a2a.spec.AgentSkill;

/** The peer agent's public and extended cards (same content as the Python and JS peers). */
final class Cards {
    static final String HOST = "127.0.0.1";
    static final String CARD_PATH = "/.well-known/agent-card.json";
    static final String JSONRPC_PATH = "/a2a/jsonrpc";
    static final String REST_PATH = "/a2a/rest";

    private Cards() {
    }

    /** base_url, card_url, jsonrpc_url, rest_url, grpc_target: the READY line's URLs. */
    static Map<String, Object> urls(int httpPort, Integer grpcPort) {
        String base = "http://" + HOST + ":" + httpPort;
        Map<String, Object> urls = new LinkedHashMap<>();
        urls.put("base_url", base);
        urls.put("card_url", base + CARD_PATH);
        urls.put("jsonrpc_url", base + JSONRPC_PATH);
        urls.put("rest_url", base + REST_PATH);
        urls.put("grpc_target", grpcPort == null ? null : HOST + ":" + grpcPort);
        return urls;
    }

    static AgentCard publicCard(Map<String, Object> urls) {
        List<AgentInterface> interfaces = new ArrayList<>();
        interfaces.add(new AgentInterface("JSONRPC", (String) urls.get("jsonrpc_url"), "", "1.0"));
        interfaces.add(new AgentInterface("HTTP+JSON", (String) urls.get("rest_url"), "", "1.0"));
        if (urls.get("grpc_target") != null) {
            interfaces.add(new AgentInterface("GRPC", (String) urls.get("grpc_target"), "", "1.0"));
        }
        return AgentCard.builder()
                .name("a2a-java " + Sdk.VERSION + " peer agent")
                .description("A2A peer agent for a2a-recorder")
                .version("1.0.0")
                .supportedInterfaces(interfaces)
                .capabilities(AgentCapabilities.builder().streaming(true).pushNotifications(true)
                        .extendedAgentCard(true).build())
                .defaultInputModes(List.of("text/plain"))
                .defaultOutputModes(List.of("text/plain"))
                .skills(skills())
                .build();
    }

    static AgentCard extendedCard(AgentCard card) {
        List<AgentSkill> skills = new ArrayList<>(card.skills());
        skills.add(skill("extended", "extended only"));
        return AgentCard.builder(card)
                .description(card.description() + " (extended card)")
                .skills(skills)
                .build();
    }

    private static List<AgentSkill> skills() {
        List<AgentSkill> skills = new ArrayList<>();
        for (String id : List.of("echo", "slow", "wait", "message")) {
            skills.add(skill(id, PeerExecutor.COMMANDS.get(id)));
        }
        return skills;
    }

    private static AgentSkill skill(String id, String description) {
        return AgentSkill.builder().id(id).name(id).description(description)
                .tags(List.of("peer")).build();
    }
}
