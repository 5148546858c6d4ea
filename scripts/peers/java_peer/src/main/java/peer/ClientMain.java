package peer;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs one scenario with the SDK's client and prints its summary; returns the exit code. */
final class ClientMain {
    private ClientMain() {
    }

    /** The scenario did something other than it should. */
    static final class ScenarioFailed extends RuntimeException {
        ScenarioFailed(String why) {
            super(why);
        }
    }

    static void expect(boolean cond, String why) {
        if (!cond) {
            throw new ScenarioFailed(why);
        }
    }

    static int run(Main.ClientArgs args) {
        Summary summary = new Summary(args.scenario(), args.binding());
        PeerClient peer = new PeerClient(args, summary);
        ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "scenario");
            t.setDaemon(true);
            return t;
        });
        Future<?> job = runner.submit(() -> {
            Scenarios.run(args.scenario(), peer);
            return null;
        });
        int code = 0;
        String out;
        try {
            job.get(Math.round(args.timeout() * 1000), TimeUnit.MILLISECONDS);
            out = summary.json(true, null);
        } catch (TimeoutException e) {
            out = summary.json(false, "TimeoutError: scenario took over " + args.timeout() + "s");
            code = 1;
        } catch (Exception e) {
            Throwable why = e.getCause() != null ? e.getCause() : e;
            if (!(why instanceof ScenarioFailed)) {
                why.printStackTrace();
            }
            String text = why instanceof ScenarioFailed ? why.getMessage()
                    : why.getClass().getSimpleName() + ": " + why.getMessage();
            out = summary.json(false, text.length() > 500 ? text.substring(0, 500) : text);
            code = 1;
        } finally {
            peer.close();
        }
        System.out.println(out);
        System.out.flush();
        return code;
    }
}
