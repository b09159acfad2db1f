package dev.panoptes.worker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

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
 * <p>Threads: any thread may acquire; {@link #listening} and {@link #close()} are synchronized.
 */
final class PostgresRunLock implements StoreLock {
    private static final Logger log = LoggerFactory.getLogger(PostgresRunLock.class);
    /** PostgreSQL keeps 63 bytes of an application_name. */
    private static final int MAX_APPLICATION_NAME = 63;

    private final DatabaseTarget.Postgres database;
    private final String runId;
    private final Connection connection;
    private final String pidAndHost;
    private boolean closed;

    private PostgresRunLock(DatabaseTarget.Postgres database, String runId, Connection connection, String pidAndHost) {
        this.database = database;
        this.runId = runId;
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
        Properties properties = new Properties();
        if (database.user() != null) {
            properties.setProperty("user", database.user());
        }
        if (database.password() != null) {
            properties.setProperty("password", database.password());
        }
        properties.setProperty("ApplicationName", applicationName(pidAndHost, listen));
        if (!database.jdbcUrl().contains("tcpKeepAlive=")) {
            properties.setProperty("tcpKeepAlive", "true");
        }
        if (!database.jdbcUrl().contains("connectTimeout=")) {
            properties.setProperty("connectTimeout", "10");
        }
        Connection connection;
        try {
            connection = DriverManager.getConnection(database.jdbcUrl(), properties);
        } catch (SQLException e) {
            throw new IOException(scrub("cannot connect to " + database + " to lock run " + runId + ": "
                    + e.getMessage(), database), e);
        }
        try {
            long key = key(runId);
            boolean locked;
            try (PreparedStatement lock = connection.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
                lock.setLong(1, key);
                try (ResultSet rs = lock.executeQuery()) {
                    rs.next();
                    locked = rs.getBoolean(1);
                }
            }
            if (!locked) {
                throw new InUseException(database, runId, holder(connection, key));
            }
            log.debug("run {} locked in {} (advisory key {})", runId, database, key);
            return new PostgresRunLock(database, runId, connection, pidAndHost);
        } catch (SQLException | IOException | RuntimeException e) {
            closeQuietly(connection);
            if (e instanceof IOException io) {
                throw io;
            }
            throw new IOException(scrub("cannot lock run " + runId + " in " + database + ": " + e.getMessage(),
                    database), e);
        }
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

    /** Ends the session, which releases the lock. Idempotent; never throws. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(connection);
    }

    @Override
    public String toString() {
        return "PostgresRunLock[" + database + ", run " + runId + (closed ? ", released]" : ", held]");
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

        InUseException(DatabaseTarget.Postgres database, String runId, String holder) {
            super("run " + runId + " in " + database + " is in use by another coordinator ("
                    + (holder.isEmpty() ? "which one is unknown: its session is not visible to this user" : holder)
                    + "); stop it, or give this run another --run-label");
        }
    }
}
