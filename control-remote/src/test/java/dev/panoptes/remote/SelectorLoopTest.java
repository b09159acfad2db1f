package dev.panoptes.remote;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One loop pass at a time, on the test's own thread and clock: timers fire at exactly the
 * injected time, and completions wait for the completion executor. The socket is real; time
 * is not.
 */
class SelectorLoopTest {
    private static final long T0 = 1_000;

    private final List<RemoteWorker> registered = new CopyOnWriteArrayList<>();
    private final List<String> rejected = new CopyOnWriteArrayList<>();
    private final List<Throwable> lost = new CopyOnWriteArrayList<>();
    /** What the lost worker still held when the pool was told: its jobs assigned and queued. */
    private final List<String> heldWhenLost = new CopyOnWriteArrayList<>();
    /** The completion executor: tasks wait here until the test runs them. */
    private final List<Runnable> completionTasks = new ArrayList<>();
    private ServerSocketChannel listener;
    private SelectorLoop loop;
    private Socket client;
    private MessageStream peer;

    @BeforeEach
    void startALoopDrivenByHand() throws IOException {
        ServerOptions options = ServerOptions.builder()
                .heartbeatInterval(Duration.ofMillis(1_000))
                .heartbeatTimeout(Duration.ofMillis(3_000))
                .handshakeTimeout(Duration.ofMillis(5_000))
                .dispatchQueueCapacity(8)
                .build();
        ServerContext context = new ServerContext(options, new ServerContext.Events() {
            @Override
            public void onRegistered(RemoteWorker worker) {
                registered.add(worker);
            }

            @Override
            public void onRejected(SocketAddress remote, String reason) {
                rejected.add(reason);
            }

            @Override
            public void onDraining(RemoteWorker worker) {
            }

            @Override
            public void onLost(RemoteWorker worker, Throwable cause) {
                heldWhenLost.add(worker.pendingCount() + " assigned, " + worker.queuedCount() + " queued");
                lost.add(cause);
            }
        });
        loop = new SelectorLoop("test-loop", context, completionTasks::add, () -> {
            throw new AssertionError("this test passes the time to every pass");
        });
        loop.bindToCurrentThread();
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        loop.doWork(T0);
        client = new Socket("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
        client.setSoTimeout(10_000);
        peer = new MessageStream(client);
        SocketChannel accepted = listener.accept();
        accepted.configureBlocking(false);
        loop.adopt(accepted);
    }

    @AfterEach
    void stop() throws IOException {
        loop.shutdown();
        client.close();
        listener.close();
    }

    /** Runs passes at one instant until the condition holds (bytes cross loopback in their own time). */
    private void passesAt(long nowMs, BooleanSupplier condition) {
        await().atMost(Duration.ofSeconds(10)).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1)).until(() -> {
                    loop.doWork(nowMs);
                    return condition.getAsBoolean();
                });
    }

    private RemoteWorker registerAt(long nowMs, int capacity) throws IOException {
        peer.send(new Message.Register("w1", capacity));
        passesAt(nowMs, () -> !registered.isEmpty());
        assertThat(peer.recv()).contains(new Message.Registered(1_000, (long) ServerOptions.defaults().maxFrameBytes()));
        return registered.get(0);
    }

    /** Dispatches the job and runs a pass at {@code nowMs}; the worker has its assign by then. */
    private CompletableFuture<JobOutcome> assignedAt(long nowMs, RemoteWorker worker, Job job) throws IOException {
        CompletableFuture<JobOutcome> reply = worker.dispatch(job);
        loop.doWork(nowMs);
        assertThat(((Message.Assign) peer.recv().orElseThrow()).job().id()).isEqualTo(job.id());
        return reply;
    }

    private void runCompletions() {
        List<Runnable> tasks = new ArrayList<>(completionTasks);
        completionTasks.clear();
        tasks.forEach(Runnable::run);
    }

    @Test
    void theHandshakeTimesOutAtTheInjectedDeadline() throws IOException {
        loop.doWork(T0 + 4_999);
        assertThat(rejected).isEmpty();

        loop.doWork(T0 + 5_000);

        assertThat(rejected).singleElement().asString().contains("5000 ms");
        assertThat(peer.recv()).hasValueSatisfying(m -> assertThat(m).isInstanceOf(Message.Rejected.class));
        assertThat(peer.recv()).isEmpty();
    }

    @Test
    void aSilentWorkerIsReapedExactlyAtTheHeartbeatTimeoutAndCompletionsWaitForTheirExecutor() throws IOException {
        RemoteWorker worker = registerAt(T0, 1);
        CompletableFuture<JobOutcome> reply = worker.dispatch(TestJobs.job("j1", "p"));
        loop.doWork(T0);
        assertThat(((Message.Assign) peer.recv().orElseThrow()).job().id().value()).isEqualTo("j1");

        loop.doWork(T0 + 2_999);
        assertThat(worker.isOpen()).isTrue();
        loop.doWork(T0 + 3_000);

        assertThat(worker.isOpen()).isFalse();
        assertThat(lost).singleElement().isInstanceOf(TimeoutException.class);
        assertThat(reply).as("failed only when the completion executor runs").isNotDone();
        runCompletions();
        Throwable failure = reply.handle((ok, e) -> e).join();
        assertThat(failure).isInstanceOf(ControlException.class);
        assertThat(((ControlException) failure).isRetryable()).isTrue();
        assertThat(failure.getCause()).isInstanceOf(TimeoutException.class).hasMessageContaining("3000 ms");
    }

    @Test
    void anyFrameReceivedRestartsTheSilenceTimer() throws IOException {
        RemoteWorker worker = registerAt(T0, 1);
        Job job = TestJobs.job("j1", "p");
        CompletableFuture<JobOutcome> reply = assignedAt(T0, worker, job);

        peer.send(new Message.Result(TestJobs.echo(job)));
        passesAt(T0 + 2_500, () -> !completionTasks.isEmpty());
        runCompletions();
        assertThat(reply.join()).isEqualTo(TestJobs.echo(job));

        loop.doWork(T0 + 5_499);
        assertThat(worker.isOpen()).isTrue();
        loop.doWork(T0 + 5_500);
        assertThat(worker.isOpen()).isFalse();
    }

    @Test
    void aQuietWorkerIsSentAHeartbeatEveryInterval() throws IOException {
        registerAt(T0, 1);

        loop.doWork(T0 + 1_000);
        assertThat(peer.recv()).contains(Message.Heartbeat.COORDINATOR);
        loop.doWork(T0 + 2_000);
        assertThat(peer.recv()).contains(Message.Heartbeat.COORDINATOR);
    }

    @Test
    void onePassAssignsNoMoreThanCapacityAndAnAnswerFreesASlot() throws IOException {
        RemoteWorker worker = registerAt(T0, 2);
        List<Job> jobs = TestJobs.jobs("c", 5);
        List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
        for (Job job : jobs) {
            replies.add(worker.dispatch(job));
        }

        loop.doWork(T0);

        assertThat(worker.pendingCount()).isEqualTo(2);
        assertThat(worker.queuedCount()).isEqualTo(3);
        Job first = ((Message.Assign) peer.recv().orElseThrow()).job();
        peer.recv();
        peer.send(new Message.Result(TestJobs.echo(first)));
        passesAt(T0, () -> worker.queuedCount() == 2);
        assertThat(worker.pendingCount()).isEqualTo(2);
        runCompletions();
        assertThat(replies.get(0).join().jobId()).isEqualTo(first.id());
        assertThat(replies.subList(1, 5)).noneMatch(CompletableFuture::isDone);
    }

    @Test
    void aDispatchOnASelectorThreadNeverWaitsForRoomButFailsRetryably() throws IOException {
        RemoteWorker worker = registerAt(T0, 1);
        List<CompletableFuture<JobOutcome>> fitted = new ArrayList<>();
        for (Job job : TestJobs.jobs("fits", 8)) {
            fitted.add(worker.dispatch(job)); // the queue holds 8; this thread is the loop's
        }

        CompletableFuture<JobOutcome> ninth = worker.dispatch(TestJobs.job("ninth", "p"));

        assertThat(fitted).noneMatch(CompletableFuture::isDone);
        Throwable t = ninth.handle((ok, e) -> e).join();
        assertThat(t).isInstanceOf(ControlException.class).hasMessageContaining("selector thread")
                .hasMessageContaining("8 queued");
        assertThat(((ControlException) t).isRetryable()).isTrue();
    }

    @Test
    void shuttingTheLoopDownFailsEveryJobItHolds() throws IOException {
        RemoteWorker worker = registerAt(T0, 1);
        CompletableFuture<JobOutcome> assigned = worker.dispatch(TestJobs.job("a", "p"));
        CompletableFuture<JobOutcome> queued = worker.dispatch(TestJobs.job("q", "p"));
        loop.doWork(T0);

        loop.shutdown();
        runCompletions();

        for (CompletableFuture<JobOutcome> reply : List.of(assigned, queued)) {
            Throwable t = reply.handle((ok, e) -> e).join();
            assertThat(t instanceof CompletionException ? t.getCause() : t)
                    .isInstanceOf(ControlException.class).hasMessageContaining("shutting down");
        }
        assertThat(worker.dispatch(TestJobs.job("late", "p"))).isCompletedExceptionally();
    }

    /**
     * Issue 35, item 3: a connection that ends takes its worker out of the pool before it fails
     * any of its jobs (docs/DESIGN.md, "The connection actor"), so that a scheduler hearing of a
     * failure cannot pick the dead worker again: when the pool is told, the worker still holds
     * every job, and they fail only after.
     */
    @Test
    void aLostWorkerLeavesThePoolBeforeAnyOfItsJobsFails() throws IOException {
        RemoteWorker worker = registerAt(T0, 2);
        List<CompletableFuture<JobOutcome>> replies = new ArrayList<>();
        replies.add(assignedAt(T0, worker, TestJobs.job("a1", "p")));
        replies.add(assignedAt(T0, worker, TestJobs.job("a2", "p")));
        replies.add(worker.dispatch(TestJobs.job("q1", "p")));

        client.close();
        passesAt(T0 + 1, () -> !lost.isEmpty());

        assertThat(heldWhenLost).as("what the worker held when the pool heard it was lost")
                .containsExactly("2 assigned, 1 queued");
        assertThat(replies).as("no job fails before the pool is told").noneMatch(CompletableFuture::isDone);
        runCompletions();
        for (CompletableFuture<JobOutcome> reply : replies) {
            Throwable t = reply.handle((ok, e) -> e).join();
            assertThat(t instanceof CompletionException ? t.getCause() : t).isInstanceOf(ControlException.class)
                    .matches(e -> ((ControlException) e).isRetryable(), "retryable");
        }
        assertThat(worker.pendingCount()).isZero();
    }

    /**
     * Issue 17, finding 1: a scheduler cancels an attempt at its deadline and sends the job again
     * at once while the selector thread is mid-pass, so the redelivery reaches the table before
     * the cancel's task. It must wait behind the cancelled attempt, never fail as "dispatched
     * twice" (a permanent failure, when this is the only worker serving the model).
     */
    @Test
    void aRedeliveryThatOvertakesItsOwnCancelWaitsForTheWorkerToLetGoAndIsThenAssigned() throws IOException {
        RemoteWorker worker = registerAt(T0, 2);
        Job job = TestJobs.job("j1", "p");
        CompletableFuture<JobOutcome> first = assignedAt(T0, worker, job);

        List<CompletableFuture<JobOutcome>> second = new ArrayList<>();
        loop.doWork(T0 + 10, () -> {
            assertThat(first.cancel(true)).isTrue();
            second.add(worker.dispatch(job));
        });
        runCompletions();

        assertThat(second.get(0)).as("the redelivery waits; it is not refused").isNotDone();
        assertThat(peer.recv()).hasValueSatisfying(m -> assertThat(m).isInstanceOf(Message.Cancel.class));
        assertThat(worker.unavailableSlots()).isEqualTo(1);

        peer.send(Message.Failed.of(job.id(), "stopped as asked", dev.panoptes.control.FailureScope.TRANSIENT));
        passesAt(T0 + 20, () -> worker.pendingCount() == 1);
        assertThat(((Message.Assign) peer.recv().orElseThrow()).job().id()).isEqualTo(job.id());
        assertThat(worker.unavailableSlots()).isZero();
        peer.send(new Message.Result(TestJobs.echo(job)));
        passesAt(T0 + 30, () -> !completionTasks.isEmpty());
        runCompletions();
        assertThat(second.get(0).join()).isEqualTo(TestJobs.echo(job));
        assertThat(worker.pendingCount()).isZero();
        assertThat(worker.unavailableSlots()).isZero();
    }

    /**
     * Issue 17, finding 2: the answer is read (and its completion waits for the completion
     * executor) when the scheduler's deadline cancels the future. The answer won: the cancel says
     * so, the future completes with the answer, and no slot stays counted as held by a cancel.
     */
    @Test
    void aCancelThatComesAfterTheAnswerWasReadLosesAndHoldsNoSlot() throws IOException {
        RemoteWorker worker = registerAt(T0, 1);
        Job job = TestJobs.job("j1", "p");
        CompletableFuture<JobOutcome> reply = assignedAt(T0, worker, job);
        peer.send(new Message.Result(TestJobs.echo(job)));
        passesAt(T0, () -> !completionTasks.isEmpty());

        assertThat(reply.cancel(true)).as("the answer was read first").isFalse();
        loop.doWork(T0 + 1);
        runCompletions();

        assertThat(reply.join()).isEqualTo(TestJobs.echo(job));
        assertThat(worker.unavailableSlots()).isZero();
        CompletableFuture<JobOutcome> next = worker.dispatch(TestJobs.job("j2", "p"));
        loop.doWork(T0 + 2);
        assertThat(((Message.Assign) peer.recv().orElseThrow()).job().id().value()).isEqualTo("j2");
        assertThat(next).isNotDone();
    }

    /** A cancel that wins over an answer still in flight: the late answer only frees the slot. */
    @Test
    void anAnswerReadAfterItsCancelWonIsDroppedAndFreesTheSlotOnce() throws IOException {
        RemoteWorker worker = registerAt(T0, 1);
        Job job = TestJobs.job("j1", "p");
        CompletableFuture<JobOutcome> reply = assignedAt(T0, worker, job);

        assertThat(reply.cancel(true)).isTrue();
        assertThat(worker.unavailableSlots()).isEqualTo(1);
        peer.send(new Message.Result(TestJobs.echo(job)));
        passesAt(T0 + 1, () -> worker.unavailableSlots() == 0);
        runCompletions();

        assertThat(reply).isCancelled();
        assertThat(worker.pendingCount()).isZero();
        peer.send(new Message.Result(TestJobs.echo(job)));
        loop.doWork(T0 + 2);
        assertThat(worker.unavailableSlots()).as("a duplicate answer frees nothing twice").isZero();
    }

    /**
     * A due deadline visits its own connection only: with many connections on one loop, the
     * heartbeat of one must not cost a check of every other (O(N^2) per interval at thousands).
     */
    @Test
    void aDueDeadlineChecksOnlyTheConnectionItBelongsTo() throws IOException {
        registerAt(T0, 1);
        List<Socket> others = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                Socket other = new Socket("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
                others.add(other);
                SocketChannel accepted = listener.accept();
                accepted.configureBlocking(false);
                loop.adopt(accepted);
                new MessageStream(other).send(new Message.Register("other-" + i, 1));
            }
            passesAt(T0 + 500, () -> registered.size() == 21);

            long before = loop.timerVisits();
            loop.doWork(T0 + 1_000);

            assertThat(peer.recv()).as("the first worker's heartbeat is due").contains(Message.Heartbeat.COORDINATOR);
            assertThat(loop.timerVisits() - before).as("connections checked at its deadline").isEqualTo(1);
        } finally {
            for (Socket other : others) {
                other.close();
            }
        }
    }
}
