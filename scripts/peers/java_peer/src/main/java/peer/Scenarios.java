package peer;

import static peer.ClientMain.expect;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.a2a.client.Client;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AuthenticationInfo;
import io.a2a.spec.DeleteTaskPushNotificationConfigParams;
import io.a2a.spec.GetTaskPushNotificationConfigParams;
import io.a2a.spec.ListTaskPushNotificationConfigParams;
import io.a2a.spec.ListTaskPushNotificationConfigResult;
import io.a2a.spec.ListTasksParams;
import io.a2a.spec.PushNotificationConfig;
import io.a2a.spec.Task;
import io.a2a.spec.TaskIdParams;
import io.a2a.spec.TaskPushNotificationConfig;
import io.a2a.spec.TaskQueryParams;

/** The scenarios every peer runs (names as in run.py), with the Java SDK's client. */
final class Scenarios {
    static final String NO_WEBHOOK_URL = "http://127.0.0.1:9/no-webhook";
    static final String DEFAULT_TENANT = "tenant-a";

    private Scenarios() {
    }

    @FunctionalInterface
    private interface Body {
        void run(PeerClient p) throws Exception;
    }

    private static final Map<String, Body> ALL = Map.ofEntries(
            Map.entry("01-agent-card", Scenarios::card),
            Map.entry("03-blocking-task", p -> blocking(p, p.args.binding())),
            Map.entry("04-polling", Scenarios::polling),
            Map.entry("05-streaming", Scenarios::streaming),
            Map.entry("06-subscribe", Scenarios::subscribe),
            Map.entry("07-cancel", Scenarios::cancel),
            Map.entry("08-push-configs", Scenarios::push),
            Map.entry("09-list-tasks", Scenarios::listTasks),
            Map.entry("10-extended-card", Scenarios::extended),
            Map.entry("11-errors", Scenarios::errors),
            Map.entry("12-tenant", Scenarios::tenant),
            Map.entry("16-rest-binding", Scenarios::rest));

    static void run(String scenario, PeerClient p) throws Exception {
        ALL.get(scenario).run(p);
    }

    private static void card(PeerClient p) throws Exception {
        AgentCard card = p.resolveCard();
        List<String> ifaces = card.supportedInterfaces().stream()
                .map(i -> i.protocolBinding() + "@" + i.protocolVersion() + " " + i.url())
                .sorted().toList();
        p.summary.step("GetAgentCard", "name", card.name(), "interfaces", ifaces,
                "capabilities", new java.util.TreeMap<>(Map.of("streaming", card.capabilities().streaming(),
                        "push", card.capabilities().pushNotifications(),
                        "extended", card.capabilities().extendedAgentCard())),
                "skills", card.skills().stream().map(s -> s.id()).toList());
        expect(!card.supportedInterfaces().isEmpty(), "card lists no interfaces");
    }

    private static void blocking(PeerClient p, String binding) throws Exception {
        Client c = p.client(false, binding);
        Task task = p.send(c, p.params("echo hello", false, null), "SendMessage").task();
        expect(task != null, "no task returned");
        List<String> texts = PeerClient.artifactTexts(task);
        p.summary.last().put("texts", texts);
        String state = PeerClient.state(task.status().state());
        expect(state.equals("completed"), "state " + state);
        expect(texts.contains("echo hello"), "no 'echo hello' artifact");
    }

    private static void polling(PeerClient p) throws Exception {
        Client c = p.client(false);
        Task task = p.send(c, p.params("slow 3", true, null), "SendMessage").task();
        expect(task != null, "no task returned");
        List<String> seen = new java.util.ArrayList<>();
        Task got;
        while (true) {
            got = c.getTask(new TaskQueryParams(task.id(), null, p.tenant), null);
            String state = PeerClient.state(got.status().state());
            if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(state)) {
                seen.add(state);
            }
            if (got.status().state().isFinal()) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        String last = seen.get(seen.size() - 1);
        p.summary.step("GetTask*", "events", seen.stream().map(s -> "task:" + s).toList(),
                "state", last, "texts", PeerClient.artifactTexts(got));
        expect(last.equals("completed"), "ended " + last);
    }

    private static void streaming(PeerClient p) throws Exception {
        Client c = p.client(true);
        List<String> events = p.send(c, p.params("slow 3", false, null), "SendStreamingMessage")
                .events();
        String last = PeerClient.terminal(events);
        expect(last.equals("completed"), "stream ended " + last);
    }

    private static Task startWait(PeerClient p, Client c) throws Exception {
        Task task = p.send(c, p.params("wait", true, null), "SendMessage").task();
        expect(task != null, "no task returned for 'wait'");
        return task;
    }

    private static void subscribe(PeerClient p) throws Exception {
        Client plain = p.client(false);
        Client streaming = p.client(true);
        Task task = startWait(p, plain);
        PeerClient.Events events = new PeerClient.Events();
        streaming.subscribeToTask(new TaskIdParams(task.id(), p.tenant), List.of(events),
                events::end, null);
        // Cancel once the subscription is live, or after a second if it sends nothing first.
        try {
            events.first.get(1, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException quiet) {
            // nothing before the cancel
        }
        p.summary.facts.put("event_before_cancel", events.first.isDone());
        Task canceled = plain.cancelTask(new TaskIdParams(task.id(), p.tenant), null);
        p.summary.step("CancelTask", "state", PeerClient.state(canceled.status().state()));
        events.await();
        List<String> names = events.names();
        p.summary.step("SubscribeToTask", "events", names);
        expect(PeerClient.terminal(names).equals("canceled"),
                "subscription ended " + PeerClient.terminal(names));
    }

    private static void cancel(PeerClient p) throws Exception {
        Client c = p.client(false);
        Task task = startWait(p, c);
        Task canceled = c.cancelTask(new TaskIdParams(task.id(), p.tenant), null);
        String state = PeerClient.state(canceled.status().state());
        p.summary.step("CancelTask", "state", state);
        expect(state.equals("canceled"), "state " + state);
    }

    private static PushNotificationConfig pushConfig(PeerClient p, String id) {
        String url = p.args.webhookUrl() != null ? p.args.webhookUrl() : NO_WEBHOOK_URL;
        return new PushNotificationConfig(url, "peer-token-1",
                new AuthenticationInfo("Bearer", "peer-credentials-1"), id);
    }

    private static Map<String, Object> fields(PushNotificationConfig cfg) {
        return new java.util.TreeMap<>(Map.of("url", cfg.url(), "token", String.valueOf(cfg.token()),
                "scheme", cfg.authentication() == null ? "" : cfg.authentication().scheme()));
    }

    private static void push(PeerClient p) throws Exception {
        Client c = p.client(false);
        Task task = p.send(c, p.params("echo hello", false, null), "SendMessage").task();
        expect(task != null, "no task returned");
        String cid = "cfg-" + UUID.randomUUID().toString().substring(0, 8);
        TaskPushNotificationConfig created = c.createTaskPushNotificationConfiguration(
                new TaskPushNotificationConfig(task.id(), pushConfig(p, cid), p.tenant), null);
        p.summary.step("CreateTaskPushNotificationConfig", "config", fields(created.config()),
                "same_id", cid.equals(created.config().id()));
        TaskPushNotificationConfig got = c.getTaskPushNotificationConfiguration(
                new GetTaskPushNotificationConfigParams(task.id(), created.config().id(), p.tenant), null);
        p.summary.step("GetTaskPushNotificationConfig", "config", fields(got.config()));
        int listed = listConfigs(p, c, task);
        c.deleteTaskPushNotificationConfigurations(new DeleteTaskPushNotificationConfigParams(
                task.id(), created.config().id(), p.tenant), null);
        p.summary.step("DeleteTaskPushNotificationConfig");
        int after = listConfigs(p, c, task);
        expect(listed == 1 && after == 0, "config not listed/deleted");
        if (p.args.webhookUrl() != null) {
            Task pushed = p.send(c, p.params("echo push", false, pushConfig(p, null)),
                    "SendMessage+push").task();
            expect(pushed != null && PeerClient.state(pushed.status().state()).equals("completed"),
                    "push send failed");
        }
    }

    private static int listConfigs(PeerClient p, Client c, Task task) throws Exception {
        ListTaskPushNotificationConfigResult listed = c.listTaskPushNotificationConfigurations(
                new ListTaskPushNotificationConfigParams(task.id(), 0, "", p.tenant), null);
        p.summary.step("ListTaskPushNotificationConfigs", "count", listed.configs().size());
        return listed.configs().size();
    }

    private static void listTasks(PeerClient p) throws Exception {
        Client c = p.client(false);
        p.send(c, p.params("echo hello", false, null), "SendMessage");
        var page = c.listTasks(ListTasksParams.builder().contextId(p.contextId)
                .includeArtifacts(true).tenant(p.tenant).build(), null);
        p.summary.step("ListTasks",
                "states", page.tasks().stream().map(t -> PeerClient.state(t.status().state())).toList(),
                "total", page.totalSize(), "count", page.tasks().size());
        expect(page.tasks().size() == 1, "listed " + page.tasks().size() + " tasks");
    }

    private static void extended(PeerClient p) throws Exception {
        Client c = p.client(false);
        AgentCard card = c.getExtendedAgentCard(null);
        p.summary.step("GetExtendedAgentCard", "description", card.description(),
                "skills", card.skills().stream().map(s -> s.id()).toList());
        expect(card.description().contains("extended"), "not the extended card");
    }

    private static void errors(PeerClient p) throws Exception {
        Client c = p.client(false);
        expectError(p, "GetTask(unknown)", "TaskNotFound",
                () -> c.getTask(new TaskQueryParams(UUID.randomUUID().toString(), null, p.tenant), null));
        Task task = p.send(c, p.params("echo hello", false, null), "SendMessage").task();
        expect(task != null, "no task returned");
        expectError(p, "CancelTask(completed)", "TaskNotCancelable",
                () -> c.cancelTask(new TaskIdParams(task.id(), p.tenant), null));
    }

    @FunctionalInterface
    private interface Call {
        void run() throws Exception;
    }

    private static void expectError(PeerClient p, String call, String wanted, Call action) {
        try {
            action.run();
        } catch (Exception e) {
            String name = PeerClient.errorName(e);
            String message = String.valueOf(e.getMessage());
            p.summary.step(call, "error", name,
                    "message", message.length() > 200 ? message.substring(0, 200) : message);
            expect(name.contains(wanted), call + ": wanted " + wanted + ", got " + name + ": " + e);
            return;
        }
        p.summary.step(call);
        throw new ClientMain.ScenarioFailed(call + ": no error raised, wanted " + wanted);
    }

    private static void tenant(PeerClient p) throws Exception {
        p.tenant = p.args.tenant() != null ? p.args.tenant() : DEFAULT_TENANT;
        p.summary.facts.put("tenant", p.tenant);
        blocking(p, p.args.binding());
    }

    private static void rest(PeerClient p) throws Exception {
        p.summary.binding = "HTTP+JSON";
        blocking(p, "HTTP+JSON");
    }
}
