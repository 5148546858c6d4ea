package peer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;

/** What the client saw, in the SDK-neutral JSON shape every peer prints (see run.py). */
final class Summary {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    final String scenario;
    String binding;
    final List<Map<String, Object>> steps = new ArrayList<>();
    final Map<String, Object> facts = new LinkedHashMap<>();

    Summary(String scenario, String binding) {
        this.scenario = scenario;
        this.binding = binding;
    }

    /** Add a step; {@code fields} are name, value pairs (null values are left out). */
    Map<String, Object> step(String call, Object... fields) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("call", call);
        for (int i = 0; i + 1 < fields.length; i += 2) {
            if (fields[i + 1] != null) {
                entry.put((String) fields[i], fields[i + 1]);
            }
        }
        steps.add(entry);
        return entry;
    }

    Map<String, Object> last() {
        return steps.get(steps.size() - 1);
    }

    String json(boolean ok, String failure) {
        List<String> states = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        List<Object> errors = new ArrayList<>();
        for (Map<String, Object> s : steps) {
            for (Object ev : (List<?>) s.getOrDefault("events", List.of())) {
                String[] kd = ((String) ev).split(":", 2);
                String detail = kd.length > 1 ? kd[1] : "";
                (kd[0].equals("artifact") || kd[0].equals("message") ? texts : states).add(detail);
            }
            if (s.get("state") != null) {
                states.add((String) s.get("state"));
            }
            for (Object t : (List<?>) s.getOrDefault("texts", List.of())) {
                texts.add((String) t);
            }
            if (s.containsKey("error")) {
                errors.add(s.get("error"));
            }
        }
        states.removeIf(String::isEmpty);
        Map<String, Object> out = head();
        out.put("ok", ok);
        out.put("steps", steps);
        out.put("states", states);
        out.put("texts", texts);
        out.put("errors", errors);
        out.putAll(facts);
        if (failure != null) {
            out.put("failure", failure);
        }
        return GSON.toJson(out);
    }

    String skipped(String why) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("skipped", why);
        out.putAll(head());
        return GSON.toJson(out);
    }

    private Map<String, Object> head() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("sdk", Sdk.NAME);
        out.put("sdk_version", Sdk.VERSION);
        out.put("scenario", scenario);
        out.put("binding", binding);
        return out;
    }
}
