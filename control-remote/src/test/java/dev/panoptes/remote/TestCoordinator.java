package dev.panoptes.remote;

import dev.panoptes.control.WorkerHandle;
import org.awaitility.core.ConditionFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

import static org.awaitility.Awaitility.await;

/**
 * A {@link WorkerServer} on 127.0.0.1 port 0 with a fresh {@link SharedPool} and a listener that
 * records every event, for one test. Timeouts default to long values so that tests that do not
 * test liveness never race it; tests that do pass short ones.
 */
final class TestCoordinator implements AutoCloseable {
    final SharedPool pool = new SharedPool();
    final List<RemoteWorker> registered = new CopyOnWriteArrayList<>();
    final List<String> rejected = new CopyOnWriteArrayList<>();
    final List<SocketAddress> rejectedFrom = new CopyOnWriteArrayList<>();
    final List<RemoteWorker> lost = new CopyOnWriteArrayList<>();
    final List<Throwable> lostCauses = new CopyOnWriteArrayList<>();
    final WorkerServer server;

    private TestCoordinator(ServerOptions options) throws IOException {
        this.server = WorkerServer.start(options, pool, new WorkerServer.Listener() {
            @Override
            public void onRegistered(RemoteWorker worker) {
                registered.add(worker);
            }

            @Override
            public void onRejected(SocketAddress remote, String reason) {
                rejectedFrom.add(remote);
                rejected.add(reason);
            }

            @Override
            public void onLost(RemoteWorker worker, Throwable cause) {
                lostCauses.add(cause);
                lost.add(worker);
            }
        });
    }

    static TestCoordinator start() throws IOException {
        return start(b -> b);
    }

    /** Starts with the test defaults, changed by {@code tweak}. */
    static TestCoordinator start(UnaryOperator<ServerOptions.Builder> tweak) throws IOException {
        ServerOptions.Builder builder = ServerOptions.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .heartbeatInterval(Duration.ofMillis(200))
                .heartbeatTimeout(Duration.ofSeconds(30))
                .handshakeTimeout(Duration.ofSeconds(30));
        return new TestCoordinator(tweak.apply(builder).build());
    }

    InetSocketAddress address() {
        return server.address();
    }

    /** Waits until a worker with this id is in the pool, and returns it. */
    RemoteWorker awaitWorker(String id) {
        return eventually().until(() -> find(id), w -> w != null);
    }

    /** Waits until a worker of this fake's id and local address is in the pool, and returns it. */
    RemoteWorker awaitWorker(FakeWorker fake) {
        SocketAddress local = fake.socket().getLocalSocketAddress();
        return eventually().until(() -> {
            for (WorkerHandle h : pool.snapshot()) {
                if (h instanceof RemoteWorker r && r.remoteAddress().equals(local)) {
                    return r;
                }
            }
            return null;
        }, w -> w != null);
    }

    private RemoteWorker find(String id) {
        for (WorkerHandle h : pool.snapshot()) {
            if (h instanceof RemoteWorker r && r.id().equals(id)) {
                return r;
            }
        }
        return null;
    }

    /** True when the thread of this name is parked inside {@link RemoteWorker#dispatch}, waiting for queue space. */
    static boolean isBlockedInDispatch(String threadName) {
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            if (t.getState() == Thread.State.WAITING && t.getName().equals(threadName)) {
                for (StackTraceElement frame : e.getValue()) {
                    if (frame.getClassName().equals(ConnectionActor.class.getName())
                            && frame.getMethodName().equals("enqueue")) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Awaitility with a fine poll and a generous limit: tests wait on conditions, never on time. */
    static ConditionFactory eventually() {
        return await().atMost(Duration.ofSeconds(15)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5));
    }

    @Override
    public void close() {
        server.close();
    }
}
