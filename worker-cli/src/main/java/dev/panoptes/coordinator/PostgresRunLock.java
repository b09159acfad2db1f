package dev.panoptes.coordinator;

import dev.panoptes.console.Durations;
import dev.panoptes.control.DaemonThreads;
import dev.panoptes.control.store.RunLeases;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One coordinator per run on a shared PostgreSQL database: a session-level advisory lock
 * ({@code pg_try_advisory_lock}) on a 64-bit hash of the run id, held by a connection of its own
 * from {@link #acquire} to {@link #close()}. Coordinators of different runs proceed at once; a
 * second one on the same run is refused with one line naming the first.
 *
 * <p>The lock is the server's, so it ends with its connection: a coordinator killed with
 * {@code kill -9}, or whose network goes away, frees the run as soon as the server notices. The
 * holder names itself in its session's {@code application_name} (pid, host, listening address),
 * which a refused coordinator reads from {@code pg_stat_activity} (visible when both connect as the
 * same user, or with {@code pg_read_all_stats}).
 *
 * <p>The same goes the other way: the session can end, and the lock with it, while the coordinator
 * lives (a server restart, a network cut, {@code pg_terminate_backend}, {@code idle_session_timeout},
 * a transaction-pooling proxy handing the statements to another backend), and nothing tells the
 * holder. So once {@link #watch watched}, a thread of the lock's own asks the server every interval
 * whether this very session still holds the key in {@code pg_locks}; an error, no answer within the
 * timeout, or "no" counts as lost: the connection is closed (so that a session that lingers cannot
 * keep holding it either) and the watcher is told. It never re-acquires (see {@link StoreLock#watch}).
 *
 * <p>Threads: any thread may acquire; {@link #listening}, {@link #watch} and {@link #close()} are
 * synchronized, and so is each check on the watch thread, since a JDBC connection serves one
 * statement at a time ({@code close()} may therefore wait for a check in flight, at most its timeout).
 */
final class PostgresRunLock implements StoreLock {
    private static final Logger log = LoggerFactory.getLogger(PostgresRunLock.class);
    /** PostgreSQL keeps 63 bytes of an application_name. */
    private static final int MAX_APPLICATION_NAME = 63;

    /**
     * Whether the session running it holds the run's key: by {@code pg_backend_pid()}, so that a
     * proxy that runs the check on another backend than the one that took the lock says "no".
     */
    private static final String HELD = "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'"
            + " AND granted AND pid = pg_backend_pid() AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 1"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))";

    private final DatabaseTarget.Postgres database;
    private final String runId;
    private final long key;
    /** Used under this object's monitor only: one statement at a time. */
    private final Connection connection;
    private final String pidAndHost;
    /** The run's takeover epoch this lock took ({@link RunLeases}). */
    private final long epoch;
    /** Guarded by this: released by {@link #close()}, or lost. */
    private boolean closed;
    /** Guarded by this: why the lock was lost, or null while it was not. */
    private StoreLock.LostException lost;
    /** Guarded by this: the thread that checks the lock, once {@link #watch} started it. */
    private ScheduledExecutorService watcher;
    /** Set once by {@link #watch}, before the watch thread starts; read on that thread. */
    private Consumer<StoreLock.LostException> onLost;
    private Duration timeout;

    private PostgresRunLock(DatabaseTarget.Postgres database, String runId, long key, Connection connection,
                            String pidAndHost, long epoch) {
        this.epoch = epoch;
        this.database = database;
        this.runId = runId;
        this.key = key;
        this.connection = connection;
        this.pidAndHost = pidAndHost;
    }

    /**
     * Takes the lock of {@code runId} in {@code database}. Returns at once: never waits for
     * another holder.
     *
     * @throws InUseException when another coordinator holds the run; one line naming it
     * @throws IOException    when the database cannot be reached (the message never holds the password)
     */
    static PostgresRunLock acquire(DatabaseTarget.Postgres database, String runId, InetSocketAddress listen)
            throws IOException {
        String pidAndHost = "pid=" + ProcessHandle.current().pid() + hostPart();
        Connection connection = connect(database, runId, applicationName(pidAndHost, listen));
        try {
            long key = key(runId);
            if (!tryLock(connection, key)) {
                throw new InUseException(database, runId, holder(connection, key));
            }
            return taken(database, runId, key, connection, pidAndHost, listen);
        } catch (SQLException | IOException | RuntimeException e) {
            closeQuietly(connection);
            if (e instanceof IOException io) {
                throw io;
            }
            throw new IOException(scrub("cannot lock run " + runId + " in " + database + ": " + e.getMessage(),
                    database), e);
        }
    }

    /**
     * Waits until the lock of {@code runId} is free and takes it: a standby coordinator's wait.
     * Tries every {@code poll}; tells {@code waiting} once, on this thread, who holds the run
     * when it first finds it held. Returns as soon as the holder's session ends (its process died,
     * or the server ended a session that stopped checking its lock, see {@link #watch}).
     *
     * @throws IOException          when the database cannot be reached (the message never holds the password)
     * @throws InterruptedException when the thread is interrupted while waiting (nothing is held)
     */
    static PostgresRunLock await(DatabaseTarget.Postgres database, String runId, InetSocketAddress listen,
                                 Duration poll, Consumer<String> waiting) throws IOException, InterruptedException {
        String pidAndHost = "pid=" + ProcessHandle.current().pid() + hostPart();
        Connection connection = connect(database, runId, applicationName(pidAndHost, listen));
        boolean told = false;
        try {
            long key = key(runId);
            while (!tryLock(connection, key)) {
                if (!told) {
                    String holder = holder(connection, key);
                    waiting.accept(holder.isEmpty() ? "another coordinator (its session is not visible to this user)"
                            : holder);
                    told = true;
                }
                Thread.sleep(poll.toMillis());
            }
            return taken(database, runId, key, connection, pidAndHost, listen);
        } catch (InterruptedException | RuntimeException e) {
            closeQuietly(connection);
            throw e;
        } catch (SQLException e) {
            closeQuietly(connection);
            throw new IOException(scrub("cannot lock run " + runId + " in " + database + ": " + e.getMessage(),
                    database), e);
        }
    }

    /** The lock's own session, named for whoever looks at {@code pg_stat_activity}. */
    private static Connection connect(DatabaseTarget.Postgres database, String runId, String applicationName)
            throws IOException {
        Properties properties = new Properties();
        if (database.user() != null) {
            properties.setProperty("user", database.user());
        }
        if (database.password() != null) {
            properties.setProperty("password", database.password());
        }
        properties.setProperty("ApplicationName", applicationName);
        if (!database.jdbcUrl().contains("tcpKeepAlive=")) {
            properties.setProperty("tcpKeepAlive", "true");
        }
        if (!database.jdbcUrl().contains("connectTimeout=")) {
            properties.setProperty("connectTimeout", "10");
        }
        try {
            return DriverManager.getConnection(database.jdbcUrl(), properties);
        } catch (SQLException e) {
            throw new IOException(scrub("cannot connect to " + database + " to lock run " + runId + ": "
                    + e.getMessage(), database), e);
        }
    }

    private static boolean tryLock(Connection connection, long key) throws SQLException {
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            lock.setLong(1, key);
            try (ResultSet rs = lock.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /**
     * The lock is held: takes the run's lease ({@link RunLeases#take}), whose new epoch fences the
     * writes of any coordinator that held the run before (see {@link #epoch()}).
     */
    private static PostgresRunLock taken(DatabaseTarget.Postgres database, String runId, long key,
                                         Connection connection, String pidAndHost, InetSocketAddress listen)
            throws SQLException {
        long epoch = RunLeases.take(connection, runId, applicationName(pidAndHost, listen), Instant.now());
        log.debug("run {} locked in {} (advisory key {}, takeover epoch {})", runId, database, key, epoch);
        return new PostgresRunLock(database, runId, key, connection, pidAndHost, epoch);
    }

    /** The run's takeover epoch this lock took: what the coordinator's store is fenced by. */
    @Override
    public long epoch() {
        return epoch;
    }

    @Override
    public synchronized void listening(InetSocketAddress address) {
        if (closed) {
            return;
        }
        try (PreparedStatement set = connection.prepareStatement("SELECT set_config('application_name', ?, false)")) {
            set.setString(1, applicationName(pidAndHost, address));
            set.execute();
        } catch (SQLException e) {
            log.warn("cannot record the listening address in the session holding run {} in {}: {}", runId, database,
                    scrub(e.getMessage(), database));
        }
    }

    /**
     * Starts checking, every {@code interval}, that this session still holds the run (see the class
     * comment); the first check comes one interval from now. Each check's statement, and from now
     * on every statement of this connection, fails after {@code timeout} without an answer.
     */
    @Override
    public synchronized void watch(Duration interval, Duration timeout, Consumer<StoreLock.LostException> onLost) {
        requirePositive(interval, "check interval");
        requirePositive(timeout, "check timeout");
        Objects.requireNonNull(onLost, "onLost");
        if (watcher != null) {
            throw new IllegalStateException("the lock on run " + runId + " is already watched");
        }
        if (closed) {
            return;
        }
        this.onLost = onLost;
        this.timeout = timeout;
        try (Statement s = connection.createStatement()) {
            // The lease: a session that stops checking (its process frozen, its network cut) is
            // ended by the server once idle this long, which frees the run for a standby. Three
            // times the longer of the two, so that a holder cut off from the server finds out
            // (an interval, then a check's timeout) before the server frees its run.
            s.execute("SET idle_session_timeout = " + Math.min(Integer.MAX_VALUE,
                    3 * Math.max(interval.toMillis(), timeout.toMillis())));
        } catch (SQLException e) {
            // Before PostgreSQL 14; a standby then waits for the server to notice a dead peer (TCP keepalive).
            log.warn("the session holding run {} in {} cannot be given an idle timeout ({}); a frozen coordinator"
                    + " keeps the run until its connection dies", runId, database, scrub(e.getMessage(), database));
        }
        try {
            // A socket read timeout: without it, a check sent into a network that silently drops
            // packets would wait for TCP to give up, which takes many minutes.
            connection.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        } catch (SQLException e) {
            // The connection is gone already: the first check will say so.
            log.debug("cannot set the network timeout of the run lock's connection", e);
        }
        watcher = Executors.newSingleThreadScheduledExecutor(DaemonThreads.numbered("run-lock-check"));
        long nanos = interval.toNanos();
        watcher.scheduleWithFixedDelay(this::check, nanos, nanos, TimeUnit.NANOSECONDS);
    }

    /** Why the lock was lost, or null while it is held or after it was released. Any thread. */
    synchronized StoreLock.LostException lost() {
        return lost;
    }

    /**
     * Ends the session, which releases the lock, and stops checking it. Idempotent; never throws.
     * May wait for a check in flight (at most the check timeout).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopWatching();
        closeQuietly(connection);
    }

    @Override
    public synchronized String toString() {
        return "PostgresRunLock[" + database + ", run " + runId
                + (lost != null ? ", lost]" : closed ? ", released]" : ", held]");
    }

    /** Runs {@code sql} on the lock's own session, as a pooling proxy or a stray statement might. For tests. */
    synchronized void executeOnSession(String sql) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute(sql);
        }
    }

    /** One check, on the watch thread. Never throws: an exception would end the checks silently. */
    private void check() {
        StoreLock.LostException found;
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                found = verify();
            } catch (RuntimeException e) {
                // Whatever went wrong, the lock can no longer be shown to hold.
                found = lostBecause("checking it failed (" + e + ")", e);
            }
            if (found == null) {
                return;
            }
            lost = found;
            closed = true;
            stopWatching();
            // Also ends a session that may linger on the server (a check that timed out), so
            // that this coordinator stops holding the run, not only stops believing it does.
            closeQuietly(connection);
        }
        log.debug("run {}: {}", runId, found.getMessage(), found.getCause());
        try {
            // Outside the monitor: the watcher may well close this lock straight away.
            onLost.accept(found);
        } catch (RuntimeException e) {
            log.error("the listener of the lost lock on run {} failed", runId, e);
        }
    }

    /** Null when this session still holds the run's key, else why not. Under the monitor. */
    private StoreLock.LostException verify() {
        try (PreparedStatement q = connection.prepareStatement(HELD)) {
            q.setLong(1, key >>> 32);
            q.setLong(2, key & 0xffff_ffffL);
            try (ResultSet rs = q.executeQuery()) {
                if (rs.next() && rs.getBoolean(1)) {
                    return null;
                }
            }
            return lostBecause("the server no longer shows its session holding it (advisory key " + key
                    + " is not in pg_locks for this session: a connection pooler between coordinator and server,"
                    + " or pg_advisory_unlock on this session, releases it)", null);
        } catch (SQLException e) {
            if (causedBy(e, SocketTimeoutException.class)) {
                return lostBecause("the server did not answer a check within " + Durations.format(timeout)
                        + " (network cut, or the server stalled)", e);
            }
            return lostBecause("the session holding it ended (" + oneLine(scrub(e.getMessage(), database)) + ")", e);
        }
    }

    private StoreLock.LostException lostBecause(String why, Throwable cause) {
        return new StoreLock.LostException("lost the lock on run " + runId + " in " + database + ": " + why, cause);
    }

    /** Under the monitor. */
    private void stopWatching() {
        if (watcher != null) {
            // Not shutdownNow: the watch thread may be this one, and interrupting it would only
            // disturb the listener it is about to call.
            watcher.shutdown();
        }
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static void requirePositive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("the run lock's " + what + " must be positive, not " + d);
        }
    }

    private static String oneLine(String s) {
        return s == null ? "no message" : s.replaceAll("[\\r\\n]+", " ").strip();
    }

    /** The first 8 bytes of SHA-256 of the run id: the advisory lock's key. */
    static long key(String runId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(("panoptes run " + runId).getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(digest).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Who holds the key, as the server tells: the session's application_name, address and start. */
    private static String holder(Connection connection, long key) {
        try (PreparedStatement q = connection.prepareStatement("SELECT a.application_name, host(a.client_addr),"
                + " a.backend_start FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
                + " WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = ? AND l.objid::bigint = ?"
                + " AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
            q.setLong(1, key >>> 32);
            q.setLong(2, key & 0xffff_ffffL);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    return "";
                }
                List<String> parts = new ArrayList<>();
                String name = rs.getString(1);
                if (name != null && !name.isBlank()) {
                    parts.add(name.replaceAll("[\\r\\n]+", " "));
                }
                if (rs.getString(2) != null) {
                    parts.add("connected from " + rs.getString(2));
                }
                if (rs.getTimestamp(3) != null) {
                    parts.add("since " + rs.getTimestamp(3).toInstant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
                }
                return String.join(", ", parts);
            }
        } catch (SQLException e) {
            log.debug("cannot tell who holds the run lock", e);
            return "";
        }
    }

    private static String applicationName(String pidAndHost, InetSocketAddress listen) {
        String name = "panoptes coordinator " + pidAndHost + " listen=" + CoordinatorRun.hostPort(listen);
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        return bytes.length <= MAX_APPLICATION_NAME ? name
                : new String(bytes, 0, MAX_APPLICATION_NAME, StandardCharsets.US_ASCII).replaceAll("[^ -~]", "?");
    }

    private static String hostPart() {
        try {
            return " host=" + InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "";
        }
    }

    private static String scrub(String message, DatabaseTarget.Postgres database) {
        String password = database.password();
        return password == null || password.isEmpty() || message == null ? message : message.replace(password, "***");
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            log.debug("closing the run lock's connection failed", e);
        }
    }

    /**
     * Another coordinator holds the run. The message is the one line a user sees, e.g.
     * {@code run 3f2a... in postgresql://db:5432/evals is in use by another coordinator (panoptes
     * coordinator pid=4242 host=gpu-01 listen=10.0.0.5:7070, connected from 10.0.0.5, since
     * 2026-12-01T10:31:02Z); stop it, or give this run another --run-label}.
     */
    static final class InUseException extends IOException {
        private static final long serialVersionUID = 1L;

        /** Who holds the run, as the server tells; empty when its session is not visible. */
        final String holder;

        InUseException(DatabaseTarget.Postgres database, String runId, String holder) {
            super("run " + runId + " in " + database + " is in use by another coordinator ("
                    + (holder.isEmpty() ? "which one is unknown: its session is not visible to this user" : holder)
                    + "); stop it, or give this run another --run-label");
            this.holder = holder;
        }
    }
}
