package dev.panoptes.coordinator;

import dev.panoptes.control.store.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link PostgresRunLock} re-verifies itself against a real server ({@link TestPostgres}): a session
 * that ends, an advisory lock that goes from under the session, a server that stops answering and
 * {@code idle_session_timeout} are each reported as lost, once, within the check interval (plus
 * the timeout when nothing answers), while a lock that holds is never reported.
 */
class PostgresRunLockTest {
    private static final InetSocketAddress LISTEN = new InetSocketAddress("127.0.0.1", 7070);
    private static final Duration INTERVAL = Duration.ofMillis(200);

    private final TestPostgres.Database db = TestPostgres.freshDatabase();
    private final DatabaseTarget.Postgres target = new DatabaseTarget.Postgres(db.url(), db.user(), db.password());
    private final List<StoreLock.LostException> told = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : cleanup) {
            c.close();
        }
    }

    @Test
    void aSessionTerminatedFromAnotherConnectionIsReportedLostWithinTheCheckIntervalAndTheRunIsFree()
            throws Exception {
        PostgresRunLock lock = acquire(target, "r1");
        lock.watch(INTERVAL, Duration.ofSeconds(5), told::add);

        terminateLockSession();

        // One interval after the kill at the latest, plus the slack of a busy machine.
        await().atMost(INTERVAL.multipliedBy(10)).until(() -> !told.isEmpty());
        assertThat(lock.lost()).isSameAs(told.get(0));
        assertThat(told.get(0).getMessage()).doesNotContain("\n").doesNotContain(db.password())
                .startsWith("lost the lock on run r1 in " + target + ": the session holding it ended (");
        assertThat(lock.toString()).endsWith(", lost]");
        // The server freed it: a second coordinator could take the run now, which is why the
        // holder must be told.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            try (StoreLock second = PostgresRunLock.acquire(target, "r1", LISTEN)) {
                assertThat(second).isNotNull();
            }
        });
        // Told once: the checks stopped with the loss.
        await().during(INTERVAL.multipliedBy(3)).atMost(INTERVAL.multipliedBy(10)).until(() -> told.size() == 1);
    }

    @Test
    void aLockThatHoldsIsCheckedButNeverReportedLostAndClosingStopsTheChecks() throws Exception {
        PostgresRunLock lock = acquire(target, "r2");
        lock.watch(Duration.ofMillis(100), Duration.ofSeconds(5), told::add);

        // The checks do run: the session's last statement is the check.
        await().atMost(Duration.ofSeconds(5)).until(() -> lastQueryOfLockSession().contains("pg_locks"));
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(told::isEmpty);
        assertThat(lock.lost()).isNull();
        assertThatThrownBy(() -> PostgresRunLock.acquire(target, "r2", LISTEN))
                .isInstanceOf(PostgresRunLock.InUseException.class);

        lock.close();
        assertThat(lock.toString()).endsWith(", released]");
        // A check after closing would find the session gone and report it.
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(told::isEmpty);
    }

    @Test
    void anAdvisoryLockReleasedUnderItsLiveSessionIsReportedLost() throws Exception {
        PostgresRunLock lock = acquire(target, "r3");
        lock.watch(INTERVAL, Duration.ofSeconds(5), told::add);

        // What a transaction-pooling proxy amounts to: the session answers, the lock is not its own.
        lock.executeOnSession("SELECT pg_advisory_unlock_all()");

        await().atMost(INTERVAL.multipliedBy(10)).until(() -> !told.isEmpty());
        assertThat(told.get(0).getMessage()).startsWith("lost the lock on run r3 in " + target
                + ": the server no longer shows its session holding it");
    }

    @Test
    void aServerThatStopsAnsweringCountsAsLostAfterTheTimeout() throws Exception {
        Blackhole proxy = new Blackhole(serverAddress());
        cleanup.add(proxy);
        DatabaseTarget.Postgres viaProxy = new DatabaseTarget.Postgres(
                db.url().replaceFirst("//[^/]+/", "//127.0.0.1:" + proxy.port() + "/"), db.user(), db.password());
        PostgresRunLock lock = acquire(viaProxy, "r4");
        lock.watch(INTERVAL, Duration.ofSeconds(1), told::add);
        await().during(INTERVAL.multipliedBy(3)).atMost(Duration.ofSeconds(3)).until(told::isEmpty);

        // Packets dropped, no reset: the connection looks open and nothing ever answers.
        proxy.drop();

        await().atMost(Duration.ofSeconds(10)).until(() -> !told.isEmpty());
        assertThat(told.get(0).getMessage()).startsWith("lost the lock on run r4 in " + viaProxy
                + ": the server did not answer a check within 1s (network cut, or the server stalled)");
    }

    @Test
    void theLockSessionKeepsItsOwnIdleTimeoutTheLeaseWhateverTheDatabaseSets() throws Exception {
        // Shorter than the check interval: it used to end the lock's session between two checks.
        db.execute("ALTER DATABASE " + db.name() + " SET idle_session_timeout = '300ms'");
        PostgresRunLock lock = acquire(target, "r5");
        lock.watch(Duration.ofMillis(500), Duration.ofMillis(500), told::add);

        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(told::isEmpty);
        assertThat(lock.toString()).endsWith(", held]");
    }

    @Test
    void watchingTakesPositiveDurationsAndHappensOnce() throws Exception {
        PostgresRunLock lock = acquire(target, "r6");
        assertThatThrownBy(() -> lock.watch(Duration.ZERO, Duration.ofSeconds(1), told::add))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the run lock's check interval must be positive, not PT0S");
        assertThatThrownBy(() -> lock.watch(INTERVAL, Duration.ofSeconds(-1), told::add))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the run lock's check timeout must be positive, not PT-1S");
        lock.watch(INTERVAL, Duration.ofSeconds(5), told::add);
        assertThatThrownBy(() -> lock.watch(INTERVAL, Duration.ofSeconds(5), told::add))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the lock on run r6 is already watched");
    }

    @Test
    void aStandbyWaitsForTheHolderToEndAndTakesTheRunWithTheNextTakeoverEpoch() throws Exception {
        PostgresRunLock holder = acquire(target, "r7");
        assertThat(holder.epoch()).isEqualTo(1);
        List<String> waiting = new CopyOnWriteArrayList<>();
        java.util.concurrent.CompletableFuture<StoreLock> standby = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return PostgresRunLock.await(target, "r7", LISTEN, Duration.ofMillis(50), waiting::add);
                    } catch (IOException | InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
        await().atMost(Duration.ofSeconds(10)).until(() -> !waiting.isEmpty());
        assertThat(waiting.get(0)).startsWith("panoptes coordinator pid=" + ProcessHandle.current().pid());
        assertThat(standby).isNotDone();

        holder.close();

        StoreLock taken = standby.get(10, java.util.concurrent.TimeUnit.SECONDS);
        cleanup.add(taken);
        assertThat(taken.epoch()).isEqualTo(2);
        assertThat(waiting).hasSize(1);
    }

    @Test
    void aHolderThatStopsCheckingLosesItsSessionAfterThreeIntervalsSoThatAStandbyTakesTheRun() throws Exception {
        PostgresRunLock holder = acquire(target, "r8");
        holder.watch(INTERVAL, INTERVAL, told::add);
        StoreLock taken;
        // Holding the lock's monitor stops its checks, as a frozen process would: its session goes
        // idle, and the server ends it after the lease (three intervals).
        synchronized (holder) {
            taken = PostgresRunLock.await(target, "r8", LISTEN, Duration.ofMillis(50), h -> { });
        }
        cleanup.add(taken);
        assertThat(taken.epoch()).isEqualTo(2);
        // Woken, the holder finds out at its next check.
        await().atMost(INTERVAL.multipliedBy(25)).until(() -> !told.isEmpty());
        assertThat(told.get(0).getMessage()).startsWith("lost the lock on run r8 in " + target + ": the session"
                + " holding it ended (");
    }

    // ---- helpers ----

    private PostgresRunLock acquire(DatabaseTarget.Postgres where, String runId) throws IOException {
        PostgresRunLock lock = PostgresRunLock.acquire(where, runId, LISTEN);
        cleanup.add(lock);
        return lock;
    }

    /** Ends the lock's session from another one, as an administrator or a server restart would. */
    private void terminateLockSession() throws SQLException {
        try (Connection c = db.connect();
             PreparedStatement kill = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     + " WHERE datname = ? AND application_name LIKE 'panoptes coordinator %'")) {
            kill.setString(1, db.name());
            try (ResultSet rs = kill.executeQuery()) {
                assertThat(rs.next()).as("the lock's session is visible").isTrue();
                assertThat(rs.getBoolean(1)).isTrue();
                assertThat(rs.next()).as("one lock session").isFalse();
            }
        }
    }

    private String lastQueryOfLockSession() throws SQLException {
        try (Connection c = db.connect();
             PreparedStatement q = c.prepareStatement("SELECT query FROM pg_stat_activity"
                     + " WHERE datname = ? AND application_name LIKE 'panoptes coordinator %'")) {
            q.setString(1, db.name());
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? rs.getString(1) : "";
            }
        }
    }

    private InetSocketAddress serverAddress() throws SQLException {
        try (Connection c = db.connect();
             ResultSet rs = c.createStatement().executeQuery("SELECT inet_server_port()")) {
            rs.next();
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), rs.getInt(1));
        }
    }

    /**
     * A loopback TCP relay to the server that can start dropping everything, in both directions,
     * without closing anything: a network cut as the coordinator sees it.
     */
    private static final class Blackhole implements AutoCloseable {
        private final ServerSocket listener;
        private final InetSocketAddress server;
        private final AtomicBoolean dropping = new AtomicBoolean();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        Blackhole(InetSocketAddress server) throws IOException {
            this.server = server;
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(this::accept, "blackhole-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        void drop() {
            dropping.set(true);
        }

        private void accept() {
            try {
                while (true) {
                    Socket client = listener.accept();
                    Socket upstream = new Socket(server.getAddress(), server.getPort());
                    sockets.add(client);
                    sockets.add(upstream);
                    relay(client, upstream);
                    relay(upstream, client);
                }
            } catch (IOException e) {
                // Closed.
            }
        }

        private void relay(Socket from, Socket to) {
            Thread t = new Thread(() -> {
                byte[] buffer = new byte[8192];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int n;
                    while ((n = in.read(buffer)) >= 0) {
                        if (!dropping.get()) {
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    }
                } catch (IOException e) {
                    // One side closed.
                }
            }, "blackhole-relay");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
