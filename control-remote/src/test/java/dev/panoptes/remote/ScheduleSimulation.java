package dev.panoptes.remote;

import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.Scheduler;
import dev.panoptes.control.schedule.SchedulerOptions;
import dev.panoptes.control.schedule.SteppedRun;
import dev.panoptes.control.store.ResultStore;
import dev.panoptes.control.wire.Message;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One seeded schedule of the real coordinator, on one thread: a {@link SelectorLoop} driven by
 * hand with an injected clock, its {@link ConnectionActor}s, {@link PendingJobs} and
 * {@link RemoteWorker}s, a {@link SharedPool}, and a {@link Scheduler} run stepped on the same
 * clock, against {@link SimulatedPeer}s on real loopback sockets. The seed picks every event and
 * its order: a scheduler step, a loop pass, a completion batch run out of order, an answer, a
 * failure of each scope, a duplicate answer, a heartbeat, time passing (deadlines, cancels,
 * silent peers reaped), a drain, a peer closing, a peer connecting (under an id used before).
 * After every event the invariants are checked; then the peers turn benign and the run must end.
 *
 * <p>Invariants: every job ends exactly once, stored or failed with a reason that is its own (a
 * peer said {@code failed} with scope {@code job} for it); no slot is leaked or freed twice (each
 * open connection's {@link PendingJobs#unavailableSlots()} equals the cancelled jobs its table
 * holds, and drops to zero when nothing is pending); no connection holds more than its capacity;
 * no peer is ever assigned a job it still holds; each completed job is stored once.
 */
final class ScheduleSimulation {
    static final long HEARTBEAT_INTERVAL_MS = 1_000;
    static final long HEARTBEAT_TIMEOUT_MS = 3_000;
    static final long JOB_TIMEOUT_MS = 2_000;
    private static final int MAX_PEERS = 4;
    private static final int TRACE_LENGTH = 40;
    /** Off only to see what else a schedule breaks once a slot count has drifted. */
    private static final boolean CHECK_SLOTS = !Boolean.getBoolean("panoptes.schedule.skipSlotCheck");

    private final long seed;
    private final Random rnd;
    private final int jobCount;
    private final boolean directCompletions;
    private long nowMs = 1_000_000;
    private final List<Runnable> completions = new ArrayList<>();
    private final Map<SocketAddress, RemoteWorker> registered = new HashMap<>();
    private final List<SimulatedPeer> peers = new ArrayList<>();
    private final List<String> usedIds = new ArrayList<>();
    private final Map<JobId, Integer> ended = new HashMap<>();
    private final Set<JobId> ownFailures = new HashSet<>();
    private final List<String> violations = new ArrayList<>();
    private final ArrayDeque<String> trace = new ArrayDeque<>();
    private final SharedPool pool = new SharedPool();
    private final FlakyStore store = new FlakyStore();
    private SelectorLoop loop;
    private ServerSocketChannel listener;
    private SteppedRun run;
    private int serial;
    private int events;

    ScheduleSimulation(long seed) {
        this.seed = seed;
        this.rnd = new Random(seed);
        this.jobCount = 4 + rnd.nextInt(28);
        this.directCompletions = rnd.nextBoolean();
    }

    /** What one schedule did. */
    record Outcome(int events, int jobs, int stored, int failed, int storeFailures) {
    }

    /**
     * Plays {@code faultEvents} random events, then benign ones until the run ends.
     *
     * @throws AssertionError naming the seed, the broken invariant and the last events
     */
    Outcome play(int faultEvents) throws IOException {
        start();
        try {
            for (int i = 0; i < faultEvents && run.outstanding() > 0; i++) {
                randomEvent();
                check();
            }
            finishBenignly();
            checkEnd();
            int failed = 0;
            for (JobId id : ownFailures) {
                failed += ended.containsKey(id) && store.storedVignetteIds(id).isEmpty() ? 1 : 0;
            }
            return new Outcome(events, jobCount, (int) store.recordCount(), failed, store.failedWrites());
        } catch (SimulationFailure e) {
            throw e;
        } catch (AssertionError | RuntimeException e) {
            // A check inside a peer, or an assertion in the coordinator itself: name the seed too.
            SimulationFailure failure = failure(e.toString());
            failure.initCause(e);
            throw failure;
        } finally {
            stop();
        }
    }

    private void start() throws IOException {
        ServerOptions options = ServerOptions.builder()
                .heartbeatInterval(Duration.ofMillis(HEARTBEAT_INTERVAL_MS))
                .heartbeatTimeout(Duration.ofMillis(HEARTBEAT_TIMEOUT_MS))
                .handshakeTimeout(Duration.ofMillis(5_000))
                .dispatchQueueCapacity(256)
                .directCompletions(directCompletions)
                .build();
        ServerContext context = new ServerContext(options, new ServerContext.Events() {
            @Override
            public void onRegistered(RemoteWorker worker) {
                registered.put(worker.remoteAddress(), worker);
                pool.add(worker);
            }

            @Override
            public void onRejected(SocketAddress remote, String reason) {
                violations.add("a simulated peer was rejected: " + reason);
            }

            @Override
            public void onDraining(RemoteWorker worker) {
                pool.remove(worker);
            }

            @Override
            public void onLost(RemoteWorker worker, Throwable cause) {
                pool.remove(worker);
            }
        });
        loop = new SelectorLoop("simulated-loop", context, completions::add, () -> {
            throw new AssertionError("the simulation passes the time to every pass");
        });
        loop.bindToCurrentThread();
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        SchedulerOptions schedulerOptions = SchedulerOptions.defaults()
                .withMaxAttempts(1_000)
                .withRetryBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                .withWaitForWorkers(Duration.ofDays(1))
                .withJobTimeout(Duration.ofMillis(JOB_TIMEOUT_MS))
                .withQuarantine(3, Duration.ofSeconds(2), Duration.ofSeconds(8))
                .withSkipCompleted(false)
                // Retried at once, in real time: the step waits for its own writes.
                .withStoreRetry(new SchedulerOptions.StoreRetry(Duration.ofMillis(1), Duration.ofMillis(1),
                        Duration.ofDays(1), 1_000))
                .withListener(new Ends());
        run = new Scheduler(pool, store, schedulerOptions)
                .start(TestJobs.jobs("s" + seed, jobCount), () -> TimeUnit.MILLISECONDS.toNanos(nowMs));
        connect(false);
    }

    private void stop() throws IOException {
        for (SimulatedPeer p : peers) {
            p.close();
        }
        run.finish();
        loop.shutdown();
        listener.close();
    }

    // ------------------------------------------------------------------ events

    private void randomEvent() throws IOException {
        events++;
        int r = rnd.nextInt(100);
        if (r < 18) {
            note("scheduler step");
            run.step();
        } else if (r < 30) {
            note("loop pass");
            settle();
        } else if (r < 36) {
            note("loop pass with the scheduler stepping mid-pass");
            settle(() -> {
                if (rnd.nextBoolean()) {
                    runOneCompletionBatch();
                }
                run.step();
            });
        } else if (r < 46) {
            runOneCompletionBatch();
        } else if (r < 49) {
            note("all completion batches");
            runCompletions();
        } else if (r < 65) {
            answer(rnd.nextInt(5) == 0 ? null : Boolean.TRUE);
        } else if (r < 71) {
            fail(pickScope());
        } else if (r < 73) {
            lateAnswer();
        } else if (r < 79) {
            heartbeat(randomPeer());
        } else if (r < 88) {
            long ms = 1 + rnd.nextInt((int) JOB_TIMEOUT_MS);
            nowMs += ms;
            note("time +" + ms + " ms");
        } else if (r < 89) {
            closeRandomPeer();
        } else if (r < 91) {
            if (peers.size() < MAX_PEERS) {
                connect(rnd.nextBoolean());
            }
        } else if (r < 92) {
            if (rnd.nextInt(4) == 0) {
                drainRandomPeer();
            } else if (rnd.nextBoolean()) {
                int n = 1 + rnd.nextInt(3);
                note("the store fails its next " + n + " writes");
                store.failNext(n);
            } else {
                note("the store's next write is committed, then fails");
                store.failNextAfterWriting();
            }
        } else if (r < 95) {
            note("scheduler step + loop pass");
            run.step();
            settle();
        } else {
            long ms = JOB_TIMEOUT_MS + rnd.nextInt(50);
            nowMs += ms;
            note("time +" + ms + " ms, then a loop pass with the scheduler stepping mid-pass");
            settle(run::step);
        }
    }

    private FailureScope pickScope() {
        int r = rnd.nextInt(10);
        return r < 5 ? FailureScope.TRANSIENT : r < 9 ? FailureScope.WORKER : FailureScope.JOB;
    }

    private void connect(boolean reuseId) throws IOException {
        String id = reuseId && !usedIds.isEmpty() ? usedIds.get(rnd.nextInt(usedIds.size())) : "w" + (usedIds.size() + 1);
        if (!usedIds.contains(id)) {
            usedIds.add(id);
        }
        int capacity = 1 + rnd.nextInt(3);
        SimulatedPeer peer = SimulatedPeer.connect((InetSocketAddress) listener.getLocalAddress(), id, capacity,
                ++serial);
        SocketChannel accepted = listener.accept();
        accepted.configureBlocking(false);
        // As the server's acceptor sets it: small frames leave at once, not behind Nagle's timer.
        accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
        loop.adopt(accepted);
        peer.send(new Message.Register(id, capacity));
        peers.add(peer);
        note("connect " + peer + " capacity " + capacity);
        settle();
        if (peer.worker == null) {
            throw failure("peer " + peer + " did not register");
        }
    }

    private void answer(Boolean result) throws IOException {
        SimulatedPeer peer = randomPeerHolding();
        if (peer == null) {
            return;
        }
        Job job = peer.take(randomHeld(peer));
        if (result == null) {
            // A worker that lets go of a job by failing it, transiently, as after a cancel.
            note(peer + " fails " + job.id() + " transiently" + (peer.cancelled.contains(job.id()) ? " (cancelled)" : ""));
            peer.send(Message.Failed.of(job.id(), "simulated transient failure", FailureScope.TRANSIENT));
        } else {
            note(peer + " answers " + job.id());
            peer.send(new Message.Result(TestJobs.echo(job)));
        }
    }

    private void fail(FailureScope scope) throws IOException {
        SimulatedPeer peer = randomPeerHolding();
        if (peer == null) {
            return;
        }
        Job job = peer.take(randomHeld(peer));
        if (scope == FailureScope.JOB) {
            ownFailures.add(job.id());
        }
        note(peer + " fails " + job.id() + " with scope " + scope.wireName());
        peer.send(Message.Failed.of(job.id(), "simulated " + scope.wireName() + " failure", scope));
    }

    private void lateAnswer() throws IOException {
        SimulatedPeer peer = randomPeer();
        if (peer == null || peer.answered.isEmpty()) {
            return;
        }
        Job job = peer.answered.get(rnd.nextInt(peer.answered.size()));
        if (peer.held.containsKey(job.id())) {
            // Assigned to it again since: to the coordinator this answers that attempt, so it lets go of it.
            peer.take(job.id());
        }
        note(peer + " answers " + job.id() + " again (late or duplicate)");
        peer.send(new Message.Result(TestJobs.echo(job)));
    }

    private void heartbeat(SimulatedPeer peer) throws IOException {
        if (peer != null) {
            note(peer + " heartbeats");
            peer.send(new Message.Heartbeat(peer.workerId));
        }
    }

    private void closeRandomPeer() throws IOException {
        SimulatedPeer peer = randomPeer();
        if (peer == null) {
            return;
        }
        note(peer + " closes its connection holding " + peer.held.keySet());
        peer.closedByPeer = true;
        peer.close();
        settle();
    }

    private void drainRandomPeer() throws IOException {
        SimulatedPeer peer = randomPeer();
        if (peer == null || peer.draining) {
            return;
        }
        note(peer + " drains");
        peer.draining = true;
        peer.send(new Message.Drain());
    }

    private void runOneCompletionBatch() {
        if (completions.isEmpty()) {
            return;
        }
        int i = rnd.nextInt(completions.size());
        note("completion batch " + (i + 1) + " of " + completions.size());
        completions.remove(i).run();
    }

    private void runCompletions() {
        while (!completions.isEmpty()) {
            completions.remove(0).run();
        }
    }

    /**
     * Loop passes at the present instant until every byte each side sent has been read by the
     * other, and every peer closed by either side is gone: then nothing is left in flight on
     * loopback, and what happens next depends on the seed alone.
     */
    private void settle() throws IOException {
        settle(null);
    }

    /** {@link #settle()}, with {@code midPass} run in the first pass after its tasks, before its I/O. */
    private void settle(Runnable midPass) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            loop.doWork(nowMs, midPass);
            midPass = null;
            boolean behind = false;
            for (int i = peers.size() - 1; i >= 0; i--) {
                SimulatedPeer peer = peers.get(i);
                if (peer.worker == null) {
                    RemoteWorker w = registered.get(peer.localAddress());
                    if (w == null) {
                        behind = true;
                        continue;
                    }
                    peer.worker = w;
                }
                ConnectionActor actor = peer.actor();
                if (!peer.closedByPeer) {
                    peer.catchUp();
                }
                if (!actor.isOpen()) {
                    if (!peer.closedByPeer) {
                        note(peer + " was disconnected by the coordinator");
                    }
                    peer.close();
                    peers.remove(i);
                } else if (peer.closedByPeer || actor.bytesRead() < peer.written()) {
                    behind = true;
                }
            }
            if (!behind) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw failure("loopback did not settle within 10 s");
            }
            Thread.onSpinWait();
        }
    }

    /** Benign peers: every held job answered, heartbeats, time moving on, until the run ends. */
    private void finishBenignly() throws IOException {
        note("--- benign from here on");
        for (int round = 0; round < 2_000; round++) {
            if (run.outstanding() > 0 && peers.stream().noneMatch(p -> !p.draining)) {
                connect(false);
            }
            for (SimulatedPeer peer : new ArrayList<>(peers)) {
                for (JobId id : new ArrayList<>(peer.held.keySet())) {
                    peer.send(new Message.Result(TestJobs.echo(peer.take(id))));
                }
                peer.send(new Message.Heartbeat(peer.workerId));
                if (peer.draining && peer.held.isEmpty()) {
                    peer.closedByPeer = true;
                    peer.close();
                }
            }
            settle();
            runCompletions();
            run.step();
            settle();
            runCompletions();
            check();
            if (run.outstanding() == 0 && peers.stream().allMatch(p -> p.held.isEmpty())) {
                return;
            }
            nowMs += 250;
        }
        throw failure("the run did not end: " + run.outstanding() + " jobs outstanding after 2,000 benign rounds;"
                + " workers: " + describeWorkers());
    }

    // ------------------------------------------------------------------ invariants

    private void check() {
        if (!violations.isEmpty()) {
            throw failure(String.join("; ", violations));
        }
        for (SimulatedPeer peer : peers) {
            ConnectionActor actor = peer.actor();
            if (actor == null || !actor.isOpen()) {
                continue;
            }
            PendingJobs table = actor.jobs();
            int held = table.slotsHeldByCancels();
            if (CHECK_SLOTS && table.unavailableSlots() != held) {
                throw failure("worker " + peer + " counts " + table.unavailableSlots()
                        + " slots held by cancelled jobs, but its table holds " + held
                        + " cancelled jobs (a slot leaked or freed twice)");
            }
            if (table.pendingCount() + table.cancelledCount() > table.capacity()) {
                throw failure("worker " + peer + " has " + table.pendingCount() + " pending and "
                        + table.cancelledCount() + " cancelled jobs, over its capacity of " + table.capacity());
            }
        }
    }

    private void checkEnd() {
        check();
        for (Job job : TestJobs.jobs("s" + seed, jobCount)) {
            Integer n = ended.get(job.id());
            if (n == null || n != 1) {
                throw failure("job " + job.id() + " ended " + (n == null ? 0 : n) + " times");
            }
            boolean stored = !store.storedVignetteIds(job.id()).isEmpty();
            if (!stored && !ownFailures.contains(job.id())) {
                throw failure("job " + job.id() + " was neither stored nor failed by its own fault");
            }
        }
        for (SimulatedPeer peer : peers) {
            ConnectionActor actor = peer.actor();
            if (CHECK_SLOTS && actor != null && actor.isOpen()
                    && (actor.unavailableSlots() != 0 || actor.pendingCount() != 0)) {
                throw failure("worker " + peer + " still has " + actor.pendingCount() + " pending and "
                        + actor.unavailableSlots() + " unavailable slots with every job answered: " + actor.jobs()
                        + ", draining " + actor.isDraining());
            }
        }
    }

    /** Records how each job ends, and whether its failure was its own. */
    private final class Ends implements ProgressListener {
        @Override
        public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
            ended.merge(job.id(), 1, Integer::sum);
            note("  job " + job.id() + " completed by " + worker.id());
        }

        @Override
        public void onFailed(Job job, String reason, int attempts) {
            ended.merge(job.id(), 1, Integer::sum);
            note("  job " + job.id() + " failed: " + reason);
            if (!ownFailures.contains(job.id())) {
                violations.add("job " + job.id() + " failed for good, and no worker said it was the job's own"
                        + " failure: " + reason);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    private SimulatedPeer randomPeer() {
        List<SimulatedPeer> live = new ArrayList<>();
        for (SimulatedPeer p : peers) {
            if (p.worker != null && !p.closedByPeer) {
                live.add(p);
            }
        }
        return live.isEmpty() ? null : live.get(rnd.nextInt(live.size()));
    }

    private SimulatedPeer randomPeerHolding() {
        List<SimulatedPeer> holding = new ArrayList<>();
        for (SimulatedPeer p : peers) {
            if (!p.closedByPeer && !p.held.isEmpty()) {
                holding.add(p);
            }
        }
        return holding.isEmpty() ? null : holding.get(rnd.nextInt(holding.size()));
    }

    private JobId randomHeld(SimulatedPeer peer) {
        List<JobId> ids = new ArrayList<>(peer.held.keySet());
        return ids.get(rnd.nextInt(ids.size()));
    }

    private String describeWorkers() {
        StringBuilder b = new StringBuilder();
        for (SimulatedPeer peer : peers) {
            ConnectionActor actor = peer.actor();
            b.append(peer).append(actor == null ? " (unregistered)" : " pending=" + actor.pendingCount()
                    + " queued=" + actor.queuedCount() + " unavailable=" + actor.unavailableSlots()
                    + " cancelled=" + actor.jobs().cancelledCount() + " open=" + actor.isOpen()
                    + " inPool=" + pool.contains(peer.worker)).append("; ");
        }
        return b.toString();
    }

    private void note(String event) {
        if (trace.size() == TRACE_LENGTH) {
            trace.removeFirst();
        }
        trace.addLast("[" + events + " @" + nowMs + "] " + event);
    }

    /** A broken invariant, with the seed that replays it and the events that led there. */
    static final class SimulationFailure extends AssertionError {
        SimulationFailure(String message) {
            super(message);
        }
    }

    private SimulationFailure failure(String what) {
        return new SimulationFailure("schedule seed " + seed + " (" + jobCount + " jobs, directCompletions="
                + directCompletions + ") broke an invariant after " + events + " events: " + what
                + "\nreplay it with -Dpanoptes.schedule.seed=" + seed + "\nlast events:\n  "
                + String.join("\n  ", trace));
    }
}
