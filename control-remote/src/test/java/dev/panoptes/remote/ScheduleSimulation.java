package dev.panoptes.remote;

import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.ProgressListener;
import dev.panoptes.control.schedule.RunReport;
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
import java.util.Iterator;
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
 * <p>The store ({@link FlakyStore}) fails writes before and after committing, fails batches midway
 * with a commit in doubt, refuses chosen answers and failure records, and holds some answers
 * before the run starts; the run allows few attempts, so that what each failure costs shows.
 *
 * <p>Invariants: every job ends exactly once, stored or failed with a reason that is its own (a
 * peer said {@code failed} with scope {@code job} for it, the store refused its answer, or its
 * attempts were spent); each failure costs its job exactly what docs/DESIGN.md says
 * ({@link AttemptAccounting}) and a job-scoped one is never retried; no slot is leaked or freed
 * twice (each open connection's {@link PendingJobs#unavailableSlots()} equals the cancelled jobs
 * its table holds, and drops to zero when nothing is pending); no connection holds more than its
 * capacity; no peer is ever assigned a job it still holds; each completed job is stored once; a
 * batch of answers stops growing at {@value FlakyStore#BATCH_RECORDS} records; and the run's
 * summary says what the store holds: jobs completed and failed (a failure record the store
 * refused settled all the same), duplicates, completions per worker, attempts.
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
    private final List<Job> jobs;
    private final boolean directCompletions;
    private final int maxAttempts;
    private final int maxWorkerFaults;
    private long nowMs = 1_000_000;
    private final List<Runnable> completions = new ArrayList<>();
    private final Map<SocketAddress, RemoteWorker> registered = new HashMap<>();
    private final List<SimulatedPeer> peers = new ArrayList<>();
    private final List<String> usedIds = new ArrayList<>();
    private final Map<JobId, Integer> ended = new HashMap<>();
    private final Set<JobId> ownFailures = new HashSet<>();
    private final Set<JobId> refusedAnswers = new HashSet<>();
    private final Set<JobId> refusedFailures = new HashSet<>();
    private final Set<JobId> storedElsewhere = new HashSet<>();
    private final Map<JobId, String> completedBy = new HashMap<>();
    private final Set<JobId> failedForGood = new HashSet<>();
    private final List<String> violations = new ArrayList<>();
    private final AttemptAccounting accounting;
    /** Redeliveries parked behind an attempt a peer let go of: each is due in the pass that reads it. */
    private final List<Unpark> unparks = new ArrayList<>();
    private int unparksSeen;
    private final ArrayDeque<String> trace = new ArrayDeque<>();
    private final SharedPool pool = new SharedPool();
    private final FlakyStore store = new FlakyStore(violations::add);
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
        // Few attempts, so that a failure charged wrongly ends a job early or late.
        this.maxAttempts = 2 + rnd.nextInt(3);
        this.maxWorkerFaults = rnd.nextInt(3);
        this.accounting = new AttemptAccounting(maxAttempts, maxWorkerFaults, violations::add);
        // One schedule in eight has large jobs, whose answers fill a store batch's record limit.
        int vignettes = rnd.nextInt(8) == 0 ? 1_100 + rnd.nextInt(400) : 1;
        this.jobs = new ArrayList<>(jobCount);
        for (int i = 0; i < jobCount; i++) {
            String[] prompts = new String[vignettes];
            for (int v = 0; v < vignettes; v++) {
                prompts[v] = "prompt " + i + "." + v;
            }
            jobs.add(TestJobs.job("s" + seed + "-" + i, prompts));
        }
    }

    /** What one schedule did. */
    record Outcome(int events, int jobs, int stored, int failed, int storeFailures, int partialBatches,
                   int refusedFailures, long duplicates, int largestBatchRecords, int unparks,
                   AttemptAccounting.Seen seen) {
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
            return new Outcome(events, jobCount, (int) store.recordCount(), failedForGood.size(), store.failedWrites(),
                    store.partialBatches(), store.refusedFailures(), store.duplicateCount(),
                    store.largestBatchRecords(), unparksSeen, accounting.seen());
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
                .withMaxAttempts(maxAttempts)
                .withMaxWorkerFaults(maxWorkerFaults)
                .withRetryBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                .withWaitForWorkers(Duration.ofDays(1))
                .withJobTimeout(Duration.ofMillis(JOB_TIMEOUT_MS))
                .withQuarantine(3, Duration.ofSeconds(2), Duration.ofSeconds(8))
                .withSkipCompleted(false)
                // Retried at once, in real time: the step waits for its own writes.
                .withStoreRetry(new SchedulerOptions.StoreRetry(Duration.ofMillis(1), Duration.ofMillis(1),
                        Duration.ofDays(1), 1_000))
                .withListener(new Ends());
        prepareStore();
        run = new Scheduler(pool, store, schedulerOptions)
                .start(jobs, () -> TimeUnit.MILLISECONDS.toNanos(nowMs));
        connect(false);
    }

    /**
     * Some jobs' answers are in the store already (stored by another coordinator sharing it, so
     * the run's own are duplicates); the store refuses some answers and some failure records.
     */
    private void prepareStore() {
        for (Job job : jobs) {
            int r = rnd.nextInt(40);
            if (r == 0) {
                storedElsewhere.add(job.id());
                store.storeElsewhere(TestJobs.echo(job));
            } else if (r == 1) {
                refusedAnswers.add(job.id());
                store.refuseAnswersOf(job.id());
            }
            if (rnd.nextInt(6) == 0) {
                refusedFailures.add(job.id());
                store.refuseFailureOf(job.id());
            }
        }
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
            int what = rnd.nextInt(6);
            if (what == 0) {
                drainRandomPeer();
            } else if (what == 1) {
                int stored = 1 + rnd.nextInt(3);
                boolean inDoubt = rnd.nextBoolean();
                note("the store's next batch of over " + stored + " answers fails after storing " + stored
                        + (inDoubt ? ", the next one committed in doubt" : ""));
                store.failMidBatch(stored, inDoubt);
            } else if (what < 4) {
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
        JobId id = randomHeld(peer);
        boolean cancelled = peer.cancelled.contains(id);
        Job job = peer.take(id);
        DispatchFuture parked = parkedBehind(peer, id);
        if (result == null) {
            // A worker that lets go of a job by failing it, transiently, as after a cancel.
            note(peer + " fails " + job.id() + " transiently" + (cancelled ? " (cancelled)" : ""));
            peer.send(Message.Failed.of(job.id(), "simulated transient failure", FailureScope.TRANSIENT));
        } else {
            note(peer + " answers " + job.id());
            peer.send(new Message.Result(TestJobs.echo(job)));
        }
        expectUnpark(peer, id, parked);
    }

    /** The redelivery waiting in the peer's table behind the attempt it is about to let go of, or null. */
    private static DispatchFuture parkedBehind(SimulatedPeer peer, JobId id) {
        ConnectionActor actor = peer.actor();
        return actor == null || !actor.isOpen() ? null : actor.jobs().parkedFor(id);
    }

    /** The peer let go of an attempt with a redelivery parked behind it: due once the coordinator reads that. */
    private void expectUnpark(SimulatedPeer peer, JobId id, DispatchFuture parked) {
        if (parked != null) {
            unparks.add(new Unpark(peer, id, parked, peer.written(), nowMs));
        }
    }

    /**
     * A redelivery parked behind a cancelled attempt that the peer let go of with the bytes up to
     * {@code letGoAt}: docs/DESIGN.md has it "assigned first" once the worker lets go, so in the
     * very pass that reads those bytes, at that instant, not when the job's own deadline passes.
     */
    private record Unpark(SimulatedPeer peer, JobId job, DispatchFuture redelivery, long letGoAt, long atMs) {
    }

    private void fail(FailureScope scope) throws IOException {
        SimulatedPeer peer = randomPeerHolding();
        if (peer == null) {
            return;
        }
        JobId id = randomHeld(peer);
        Job job = peer.take(id);
        DispatchFuture parked = parkedBehind(peer, id);
        if (scope == FailureScope.JOB) {
            ownFailures.add(job.id());
        }
        note(peer + " fails " + job.id() + " with scope " + scope.wireName());
        peer.send(Message.Failed.of(job.id(), "simulated " + scope.wireName() + " failure", scope));
        expectUnpark(peer, id, parked);
    }

    private void lateAnswer() throws IOException {
        SimulatedPeer peer = randomPeer();
        if (peer == null || peer.answered.isEmpty()) {
            return;
        }
        Job job = peer.answered.get(rnd.nextInt(peer.answered.size()));
        DispatchFuture parked = null;
        if (peer.held.containsKey(job.id())) {
            // Assigned to it again since: to the coordinator this answers that attempt, so it lets go of it.
            peer.take(job.id());
            parked = parkedBehind(peer, job.id());
        }
        note(peer + " answers " + job.id() + " again (late or duplicate)");
        peer.send(new Message.Result(TestJobs.echo(job)));
        expectUnpark(peer, job.id(), parked);
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
                    Job job = peer.take(id);
                    DispatchFuture parked = parkedBehind(peer, id);
                    peer.send(new Message.Result(TestJobs.echo(job)));
                    expectUnpark(peer, id, parked);
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
        checkUnparks();
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

    /** Each redelivery parked behind an attempt its peer let go of is assigned in the pass that read it. */
    private void checkUnparks() {
        for (Iterator<Unpark> it = unparks.iterator(); it.hasNext(); ) {
            Unpark u = it.next();
            ConnectionActor actor = u.peer().actor();
            if (!actor.isOpen() || u.redelivery().isDone() || u.redelivery().cancelClaimed()) {
                // The connection closed (it fails as never sent), or its caller gave up on it.
                it.remove();
                continue;
            }
            if (actor.bytesRead() < u.letGoAt()) {
                continue;
            }
            it.remove();
            unparksSeen++;
            if (!u.peer().held.containsKey(u.job())) {
                throw failure("the redelivery of " + u.job() + " parked behind its cancelled attempt on " + u.peer()
                        + " was not assigned when the coordinator read that the worker let go of it (sent at "
                        + u.atMs() + " ms, read by " + nowMs + " ms): " + actor.jobs());
            }
        }
    }

    private void checkEnd() {
        check();
        for (Job job : jobs) {
            Integer n = ended.get(job.id());
            if (n == null || n != 1) {
                throw failure("job " + job.id() + " ended " + (n == null ? 0 : n) + " times");
            }
            if (completedBy.containsKey(job.id()) && !store.isComplete(job)) {
                throw failure("job " + job.id() + " was reported completed, but the store does not hold its answer");
            }
        }
        checkSummary(run.finish());
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

    /** The run's summary says what the store holds, counter by counter. */
    private void checkSummary(RunReport report) {
        Set<JobId> failedInReport = new HashSet<>();
        report.failed().forEach(f -> failedInReport.add(f.jobId()));
        if (report.completed() != completedBy.size() || !failedInReport.equals(failedForGood)) {
            throw failure("the summary says " + report.completed() + " completed and " + failedInReport.size()
                    + " failed, but " + completedBy.size() + " jobs were stored and " + failedForGood.size()
                    + " failed for good");
        }
        Set<JobId> failuresHeld = new HashSet<>();
        store.forEachFailure(f -> failuresHeld.add(f.jobId()));
        Set<JobId> failuresExpected = new HashSet<>(failedForGood);
        failuresExpected.removeAll(refusedFailures);
        if (!failuresHeld.equals(failuresExpected)) {
            throw failure("the store holds the failures of " + failuresHeld + ", but the jobs failed for good whose"
                    + " failure record it did not refuse are " + failuresExpected);
        }
        if (report.duplicates() != store.duplicateCount()) {
            throw failure("the summary says " + report.duplicates() + " duplicates, but the store met "
                    + store.duplicateCount());
        }
        Map<String, Integer> byWorker = new HashMap<>();
        store.forEachRecord(r -> {
            if (completedBy.containsKey(r.jobId()) && !storedElsewhere.contains(r.jobId())
                    && r.record().vignetteId().equals("v0")) {
                byWorker.merge(r.workerId(), 1, Integer::sum);
            }
        });
        Map<String, Integer> reported = new HashMap<>(report.completedByWorker());
        storedElsewhere.forEach(id -> {
            String worker = completedBy.get(id);
            if (worker != null) {
                reported.merge(worker, -1, Integer::sum);
            }
        });
        reported.values().removeIf(n -> n == 0);
        if (!reported.equals(byWorker)) {
            throw failure("the summary's completions per worker " + report.completedByWorker() + " (less the jobs"
                    + " stored before the run " + storedElsewhere + ") are not the store's " + byWorker);
        }
        if (report.attempts() != accounting.dispatches()) {
            throw failure("the summary says " + report.attempts() + " attempts, but " + accounting.dispatches()
                    + " were dispatched");
        }
    }

    /** Records how each job ends, whether its failure was its own, and what each failure cost. */
    private final class Ends implements ProgressListener {
        @Override
        public void onDispatched(Job job, WorkerHandle worker, int attempt) {
            accounting.dispatched(job, worker, attempt);
        }

        @Override
        public void onRetry(Job job, WorkerHandle worker, Throwable cause, int attempt, Duration delay) {
            note("  job " + job.id() + " retried (attempt " + attempt + " spent): " + cause);
            accounting.retried(job, worker, cause, attempt);
        }

        @Override
        public void onQuarantined(WorkerHandle worker, String reason, int failuresInARow, Duration duration) {
            note("  worker " + worker.id() + " quarantined after " + failuresInARow + " strikes: " + reason);
            accounting.quarantined(reason);
        }

        @Override
        public void onCompleted(Job job, WorkerHandle worker, JobOutcome outcome, ResultStore.Receipt receipt) {
            ended.merge(job.id(), 1, Integer::sum);
            completedBy.put(job.id(), worker.id());
            note("  job " + job.id() + " completed by " + worker.id());
        }

        @Override
        public void onFailed(Job job, String reason, int attempts) {
            ended.merge(job.id(), 1, Integer::sum);
            failedForGood.add(job.id());
            note("  job " + job.id() + " failed: " + reason);
            accounting.failed(job, reason, attempts);
            boolean own = reason.startsWith("gave up after")
                    || reason.startsWith("the result store refused the answer") && refusedAnswers.contains(job.id())
                    || reason.contains("simulated job failure") && ownFailures.contains(job.id());
            if (!own) {
                violations.add("job " + job.id() + " failed for good, and neither a worker nor the store said it was"
                        + " the job's own failure, nor were its attempts spent: " + reason);
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
