package peer;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import io.a2a.server.agentexecution.AgentExecutor;
import io.a2a.server.agentexecution.RequestContext;
import io.a2a.server.tasks.AgentEmitter;
import io.a2a.spec.Message;
import io.a2a.spec.Part;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatus;
import io.a2a.spec.TextPart;

/**
 * Runs the command named by the first word of the user's text, like the Python and JS peers:
 * {@code echo X}, {@code slow N}, {@code wait}, {@code message X}.
 */
final class PeerExecutor implements AgentExecutor {
    static final Map<String, String> COMMANDS = Map.of(
            "echo", "echo X: task completes with the artifact 'echo X'",
            "slow", "slow N: N artifact updates spaced by --delay, then completed",
            "wait", "wait: stays working until canceled",
            "message", "message X: replies with a Message 'X', no task");

    private final long delayMillis;
    private final Map<String, CountDownLatch> waiting = new ConcurrentHashMap<>();

    PeerExecutor(double delaySeconds) {
        this.delayMillis = Math.round(delaySeconds * 1000);
    }

    @Override
    public void execute(RequestContext context, AgentEmitter emitter) {
        String text = context.getUserInput(" ").trim();
        String verb = text.split(" ", 2)[0].toLowerCase();
        String arg = text.contains(" ") ? text.split(" ", 2)[1].trim() : "";
        if (verb.equals("message") || !COMMANDS.containsKey(verb)) {
            emitter.sendMessage(verb.equals("message") ? arg : "unknown command '" + verb + "'");
            return;
        }
        if (context.getTask() == null) {
            emitter.addTask(firstTask(context, emitter, verb));
        }
        if (verb.equals("wait")) {
            awaitCancel(context.getTaskId());
            return;
        }
        emitter.startWork();
        if (verb.equals("echo")) {
            emitter.addArtifact(parts(("echo " + arg).stripTrailing()), null, "echo", null);
        } else {
            for (int i = 1; i <= slowCount(arg); i++) {
                sleep(delayMillis);
                emitter.addArtifact(parts("chunk " + i), null, "chunk-" + i, null);
            }
        }
        emitter.complete();
    }

    @Override
    public void cancel(RequestContext context, AgentEmitter emitter) {
        emitter.cancel();
        CountDownLatch latch = waiting.remove(context.getTaskId());
        if (latch != null) {
            latch.countDown();
        }
    }

    private static io.a2a.spec.Task firstTask(RequestContext context, AgentEmitter emitter,
            String verb) {
        TaskState first = verb.equals("wait") ? TaskState.TASK_STATE_WORKING
                : TaskState.TASK_STATE_SUBMITTED;
        Message message = context.getMessage();
        return emitter.taskBuilder()
                .status(new TaskStatus(first))
                .history(message == null ? List.of() : List.of(message))
                .build();
    }

    private void awaitCancel(String taskId) {
        CountDownLatch latch = waiting.computeIfAbsent(taskId, k -> new CountDownLatch(1));
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the handler interrupts us after cancel()
        }
    }

    private static List<Part<?>> parts(String text) {
        return List.of(new TextPart(text));
    }

    private static int slowCount(String arg) {
        return arg.matches("\\d+") ? Integer.parseInt(arg) : 3;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
