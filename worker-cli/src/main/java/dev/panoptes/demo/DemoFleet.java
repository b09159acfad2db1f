package dev.panoptes.demo;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.Plural;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.store.ResultStore;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The demo's workers: separate processes of this same program on loopback, started once the
 * coordinator listens, one of them (unless told otherwise) with a wrong model API, and one killed
 * with SIGKILL mid-run by the listener {@link #killer} gives; then the closing lines that say what
 * became of those two, and the stop that leaves no process behind.
 *
 * <p>{@link #start} runs on the coordinator's thread, the listeners on the scheduler's,
 * {@link #stopNow} on the shutdown hook's; the process list is safe for all three.
 */
public final class DemoFleet {
    private final List<String> javaCommand;
    private final int workers;
    private final int capacity;
    private final boolean misconfigured;
    /** Written to from the coordinator's thread (start), read by the listeners and the cleanup hook. */
    private final List<Process> processes = new CopyOnWriteArrayList<>();
    private final MisconfiguredWatch watch = new MisconfiguredWatch();
    private volatile Victim victim;

    /**
     * @param javaCommand   the command that starts this program in a new JVM (java, its options and class path)
     * @param workers       how many well-configured workers to start
     * @param capacity      the jobs each worker runs at once
     * @param misconfigured whether to start one more worker with a wrong {@code --model-api}
     */
    public DemoFleet(List<String> javaCommand, int workers, int capacity, boolean misconfigured) {
        this.javaCommand = List.copyOf(javaCommand);
        this.workers = workers;
        this.capacity = capacity;
        this.misconfigured = misconfigured;
    }

    /**
     * The listener that kills the first worker with SIGKILL once a quarter of the jobs are done,
     * and says so through {@code console}.
     */
    public ProgressListener killer(Consumer<String> console) {
        Victim v = new Victim(processes, console);
        victim = v;
        return v;
    }

    /** The listener that notes what happened to the misconfigured worker. */
    public ProgressListener misconfiguredWatch() {
        return watch;
    }

    /** What became of the killed worker's jobs and of the misconfigured worker, for after the summary. */
    public String closingLines() {
        StringBuilder b = new StringBuilder();
        Victim v = victim;
        if (v != null && v.killed.get()) {
            b.append(String.format("  demo-worker-1 was killed with SIGKILL mid-run: the %s it held %s sent to other"
                    + " workers%n", Plural.of(v.redelivered.get(), "job"), v.redelivered.get() == 1 ? "was" : "were"));
        }
        if (misconfigured) {
            b.append(String.format("  %s was started with a wrong --model-api (.../v2, and --no-model-check, without"
                    + " which it would have refused to start): its model API answered 404, %s, and its %s cost"
                    + " %s no attempt%n", MisconfiguredWatch.ID, watch.quarantined.get()
                    ? "it was quarantined" : "it was never quarantined (the run ended first)",
                    Plural.of(watch.failures.get(), "failed job"), watch.failures.get() == 1 ? "it" : "them"));
        }
        return b.toString();
    }

    /**
     * Starts the workers, each a process with its log in {@code dir}, and says so on {@code err}.
     * The coordinator's thread, once it listens.
     *
     * @param modelApi the stub model API's base URL, ending in {@code /v1}
     */
    public void start(InetSocketAddress coordinator, String modelApi, Path dir, PrintWriter err) {
        for (int i = 1; i <= workers; i++) {
            startWorker("demo-worker-" + i, modelApi, List.of(), coordinator, dir, err);
        }
        if (misconfigured) {
            // The issue this shows: one typo on one box. The check at startup would catch it, so
            // it is skipped here to show what the coordinator does when a model API breaks later.
            String wrongApi = modelApi.replaceAll("/v1$", "/v2");
            startWorker(MisconfiguredWatch.ID, wrongApi, List.of("--no-model-check", "--model", StubModelServer.MODEL),
                    coordinator, dir, err);
        }
        err.flush();
    }

    private void startWorker(String id, String modelApi, List<String> extra, InetSocketAddress coordinator, Path dir,
                             PrintWriter err) {
        List<String> command = new ArrayList<>(javaCommand);
        command.addAll(List.of("--coordinator", coordinator.getHostString() + ":" + coordinator.getPort(),
                "--model-api", modelApi,
                "--id", id, "--capacity", Integer.toString(capacity), "--heartbeat", "1s",
                "--grace", "5s"));
        command.addAll(extra);
        Path log = dir.resolve(id + ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            processes.add(p);
            err.printf("demo: started worker process %s (pid %d), log %s%n", id, p.pid(), log);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start worker process " + id + ": " + e.getMessage(), e);
        }
    }

    /** Notes what happened to the misconfigured worker, for the closing lines. Scheduler thread. */
    private static final class MisconfiguredWatch implements ProgressListener {
        static final String ID = "demo-worker-misconfigured";
        final AtomicBoolean quarantined = new AtomicBoolean();
        final AtomicInteger failures = new AtomicInteger();

        @Override
        public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
            if (worker.id().equals(ID)) {
                failures.incrementAndGet();
            }
        }

        @Override
        public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
            if (worker.id().equals(ID)) {
                quarantined.set(true);
            }
        }
    }

    /**
     * For the shutdown hook (Ctrl-C, SIGTERM): the workers get SIGTERM and a few seconds to go,
     * then SIGKILL, so that none outlives the demo and their folder can be removed.
     */
    public void stopNow() {
        processes.forEach(Process::destroy);
        try {
            for (Process p : processes) {
                if (!p.waitFor(3, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(2, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            processes.forEach(Process::destroyForcibly);
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops the workers: SIGTERM, then SIGKILL for one still running after 10 s.
     *
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    public void stop() throws InterruptedException {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * Kills the first worker with SIGKILL once a quarter of the jobs are done and it holds at
     * least one job, so that its jobs are redelivered. Runs on the scheduler thread: only
     * counts and sends a signal.
     */
    private static final class Victim implements ProgressListener {
        static final String VICTIM = "demo-worker-1";
        final AtomicBoolean killed = new AtomicBoolean();
        final AtomicInteger redelivered = new AtomicInteger();
        private final List<Process> processes;
        private final Consumer<String> console;
        private final Map<String, Integer> held = new HashMap<>();
        private int total;
        private int done;

        Victim(List<Process> processes, Consumer<String> console) {
            this.processes = processes;
            this.console = console;
        }

        @Override
        public void onStart(int toRun, int skipped) {
            total = toRun;
        }

        @Override
        public void onDispatched(Job job, WorkerHandle worker, int attempt) {
            held.merge(worker.id(), 1, Integer::sum);
            maybeKill();
        }

        @Override
        public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome,
                                ResultStore.Receipt receipt) {
            held.merge(worker.id(), -1, Integer::sum);
            done++;
            maybeKill();
        }

        @Override
        public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
            held.merge(worker.id(), -1, Integer::sum);
            if (killed.get() && worker.id().equals(VICTIM)) {
                redelivered.incrementAndGet();
            }
        }

        @Override
        public void onFailed(Job job, String reason, int attempts) {
            done++;
        }

        private void maybeKill() {
            int holding = held.getOrDefault(VICTIM, 0);
            if (killed.get() || done * 4 < total || holding < 1 || processes.isEmpty()) {
                return;
            }
            Process victim = processes.get(0);
            killed.set(true);
            victim.destroyForcibly();
            console.accept("demo: killed " + VICTIM + " (pid " + victim.pid() + ") with SIGKILL while it was running"
                    + " jobs");
        }
    }
}
