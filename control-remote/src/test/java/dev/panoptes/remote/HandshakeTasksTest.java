package dev.panoptes.remote;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The TLS handshake executor: a bounded queue, and turns by peer address. */
class HandshakeTasksTest {
    private final CountDownLatch release = new CountDownLatch(1);
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private HandshakeTasks tasks;

    @AfterEach
    void stop() {
        release.countDown();
        if (tasks != null) {
            tasks.shutdownNow();
        }
    }

    /** Occupies the one thread until the test releases it. */
    private void blockTheThread(Executor executor) {
        CountDownLatch started = new CountDownLatch(1);
        executor.execute(() -> {
            started.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        eventually().until(() -> started.getCount() == 0);
    }

    private Runnable named(String name) {
        return () -> ran.add(name);
    }

    @Test
    void aTaskBeyondTheQueuesCapacityIsRefusedSayingTheCoordinatorIsOverloaded() throws Exception {
        tasks = new HandshakeTasks(1, 3, "test-tls-");
        Executor peer = tasks.forPeer(address("10.0.0.1"));
        blockTheThread(peer);
        for (int i = 0; i < 3; i++) {
            peer.execute(named("t" + i));
        }

        assertThatThrownBy(() -> peer.execute(named("t3")))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("overloaded with TLS handshakes")
                .hasMessageContaining("3 handshake tasks are already waiting for a TLS thread");
        assertThat(tasks.queued()).isEqualTo(3);

        release.countDown();
        eventually().until(() -> ran.size() == 3);
        assertThat(ran).containsExactly("t0", "t1", "t2");
        assertThat(tasks.queued()).isZero();
        // Room again once the queue drained.
        peer.execute(named("t4"));
        eventually().until(() -> ran.size() == 4);
    }

    @Test
    void peersTakeTurnsSoABusyAddressCannotMakeAnotherWaitBehindItsBacklog() throws Exception {
        tasks = new HandshakeTasks(1, 100, "test-tls-");
        Executor flood = tasks.forPeer(address("10.0.0.1"));
        Executor worker = tasks.forPeer(address("10.0.0.2"));
        Executor unknown = tasks.forPeer(null);
        blockTheThread(flood);
        for (int i = 0; i < 20; i++) {
            flood.execute(named("flood-" + i));
        }
        worker.execute(named("worker-0"));
        worker.execute(named("worker-1"));
        unknown.execute(named("unknown-0"));

        release.countDown();
        eventually().until(() -> ran.size() == 23);

        assertThat(ran.subList(0, 6)).containsExactly("flood-0", "worker-0", "unknown-0", "flood-1", "worker-1",
                "flood-2");
        assertThat(ran.subList(6, 23)).allSatisfy(name -> assertThat(name).startsWith("flood-"));
    }

    @Test
    void afterShutdownTasksAreRefusedAndTheWaitingOnesDropped() throws Exception {
        tasks = new HandshakeTasks(1, 10, "test-tls-");
        Executor peer = tasks.forPeer(address("10.0.0.1"));
        blockTheThread(peer);
        peer.execute(named("dropped"));

        tasks.shutdownNow();

        assertThat(tasks.queued()).isZero();
        assertThatThrownBy(() -> peer.execute(named("late"))).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("closing");
        assertThat(ran).isEmpty();
    }

    private static InetAddress address(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal);
    }
}
