package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A durable {@link ResultStore} on plain JDBC. The library carries no driver: SQLite
 * ({@code org.xerial:sqlite-jdbc}) is the embedded default that the binary brings, and the SQL
 * is portable to PostgreSQL ({@code INSERT ... ON CONFLICT DO NOTHING}).
 *
 * <p>The schema is created on first use and versioned in {@code panoptes_schema}; a database
 * written by a newer schema is refused rather than misread. Each outcome is stored in one
 * transaction, so a crash never leaves half a job. On SQLite the journal is WAL and writers
 * wait for each other (busy timeout) instead of failing, so two processes may share a file.
 *
 * <p>Thread-safe: operations are serialised on the one connection.
 */
public final class JdbcResultStore implements ResultStore {
    private static final Logger log = LoggerFactory.getLogger(JdbcResultStore.class);
    /** The schema version this code writes and reads. */
    public static final int SCHEMA_VERSION = 1;
    private static final int BUSY_TIMEOUT_MS = 30_000;

    private static final String INSERT_RECORD = "INSERT INTO panoptes_records (job_id, vignette_id, response, model, "
            + "finish_reason, latency_ms, prompt_tokens, completion_tokens, worker_id, stored_at) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, vignette_id) DO NOTHING";
    private static final String UPSERT_FAILURE = "INSERT INTO panoptes_failures (job_id, reason, attempts, failed_at) "
            + "VALUES (?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET reason = excluded.reason, "
            + "attempts = excluded.attempts, failed_at = excluded.failed_at";

    private final String description;
    private final Connection connection;
    private final Clock clock;
    /** Prepared once (sqlite-jdbc compiles SQL on every prepare); guarded by {@code this}. */
    private PreparedStatement insertRecord;
    /** Guarded by {@code this}. */
    private PreparedStatement clearFailure;
    /** Guarded by {@code this}. */
    private long duplicates;
    /** Guarded by {@code this}. */
    private boolean closed;

    private JdbcResultStore(String description, Connection connection, Clock clock) {
        this.description = description;
        this.connection = connection;
        this.clock = clock;
    }

    /**
     * Opens (creating when needed) a SQLite database file. Needs the SQLite JDBC driver on the
     * class path.
     *
     * @throws StoreException when the file cannot be opened or holds a newer schema
     */
    public static JdbcResultStore openSqlite(Path file) {
        return open("jdbc:sqlite:" + file.toAbsolutePath(), Clock.systemUTC());
    }

    /**
     * Opens a store on any JDBC URL whose driver is on the class path.
     *
     * @throws StoreException when the database cannot be opened or holds a newer schema
     */
    public static JdbcResultStore open(String jdbcUrl, Clock clock) {
        String description = jdbcUrl.replaceAll("(?i)(password=)[^&;]*", "$1***");
        Connection connection;
        try {
            connection = DriverManager.getConnection(jdbcUrl);
        } catch (SQLException e) {
            throw new StoreException("cannot open result database " + description + ": " + e.getMessage()
                    + " (is the JDBC driver on the class path and the path writable?)", e);
        }
        JdbcResultStore store = new JdbcResultStore(description, connection, clock);
        try {
            store.prepare();
        } catch (SQLException | RuntimeException e) {
            store.close();
            if (e instanceof StoreException se) {
                throw se;
            }
            throw new StoreException("cannot prepare result database " + description + ": " + e.getMessage(), e);
        }
        return store;
    }

    private void prepare() throws SQLException {
        boolean sqlite = connection.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT)
                .contains("sqlite");
        try (Statement s = connection.createStatement()) {
            if (sqlite) {
                s.execute("PRAGMA busy_timeout = " + BUSY_TIMEOUT_MS);
                s.execute("PRAGMA journal_mode = WAL");
                s.execute("PRAGMA synchronous = NORMAL");
            }
        }
        connection.setAutoCommit(false);
        try (Statement s = connection.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_schema (version INTEGER NOT NULL)");
            Integer version = null;
            try (ResultSet rs = s.executeQuery("SELECT MAX(version) FROM panoptes_schema")) {
                if (rs.next()) {
                    int v = rs.getInt(1);
                    version = rs.wasNull() ? null : v;
                }
            }
            if (version != null && version > SCHEMA_VERSION) {
                connection.rollback();
                throw new StoreException("result database " + description + " has schema version " + version
                        + ", newer than the " + SCHEMA_VERSION + " this Panoptes understands; use a newer Panoptes",
                        null);
            }
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_records ("
                    + "job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, response TEXT NOT NULL, "
                    + "model TEXT, finish_reason TEXT, latency_ms BIGINT, prompt_tokens BIGINT, "
                    + "completion_tokens BIGINT, worker_id TEXT NOT NULL, stored_at BIGINT NOT NULL, "
                    + "PRIMARY KEY (job_id, vignette_id))");
            s.execute("CREATE TABLE IF NOT EXISTS panoptes_failures ("
                    + "job_id VARCHAR(256) NOT NULL PRIMARY KEY, reason TEXT NOT NULL, attempts INTEGER NOT NULL, "
                    + "failed_at BIGINT NOT NULL)");
            if (version == null) {
                s.execute("INSERT INTO panoptes_schema (version) VALUES (" + SCHEMA_VERSION + ")");
            }
            connection.commit();
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        }
        insertRecord = connection.prepareStatement(INSERT_RECORD);
        clearFailure = connection.prepareStatement("DELETE FROM panoptes_failures WHERE job_id = ?");
        log.debug("result database {} ready (schema v{})", description, SCHEMA_VERSION);
    }

    @Override
    public synchronized Receipt record(JobOutcome outcome, String workerId) {
        checkOpen();
        long now = clock.millis();
        PreparedStatement insert = insertRecord;
        try {
            int stored = 0;
            int dup = 0;
            for (ResponseRecord r : outcome.records()) {
                insert.setString(1, outcome.jobId().value());
                insert.setString(2, r.vignetteId());
                insert.setString(3, r.response());
                insert.setString(4, r.model());
                insert.setString(5, r.finishReason());
                setLong(insert, 6, r.latencyMs());
                setLong(insert, 7, r.usage() == null ? null : r.usage().promptTokens());
                setLong(insert, 8, r.usage() == null ? null : r.usage().completionTokens());
                insert.setString(9, workerId);
                insert.setLong(10, now);
                if (insert.executeUpdate() == 1) {
                    stored++;
                } else {
                    dup++;
                }
            }
            clearFailure.setString(1, outcome.jobId().value());
            clearFailure.executeUpdate();
            connection.commit();
            duplicates += dup;
            return new Receipt(stored, dup);
        } catch (SQLException e) {
            rollbackQuietly(e);
            throw new StoreException("cannot store the outcome of job " + outcome.jobId() + " from worker "
                    + workerId + " in " + description + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void recordFailure(JobId jobId, String reason, int attempts) {
        checkOpen();
        try (PreparedStatement upsert = connection.prepareStatement(UPSERT_FAILURE)) {
            upsert.setString(1, jobId.value());
            upsert.setString(2, reason);
            upsert.setInt(3, attempts);
            upsert.setLong(4, clock.millis());
            upsert.executeUpdate();
            connection.commit();
        } catch (SQLException e) {
            rollbackQuietly(e);
            throw new StoreException("cannot record the failure of job " + jobId + " in " + description + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public synchronized Set<String> storedVignetteIds(JobId jobId) {
        checkOpen();
        Set<String> ids = new HashSet<>();
        try (PreparedStatement q = connection.prepareStatement(
                "SELECT vignette_id FROM panoptes_records WHERE job_id = ?")) {
            q.setString(1, jobId.value());
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getString(1));
                }
            }
            connection.commit();
            return ids;
        } catch (SQLException e) {
            throw readFailure("the records of job " + jobId, e);
        }
    }

    /**
     * Answers a whole run in one query: a job is complete when it has as many records as
     * vignettes (records are unique per vignette, so the count is enough).
     */
    @Override
    public synchronized Set<JobId> completedAmong(Collection<Job> jobs) {
        checkOpen();
        Map<String, Integer> counts = new HashMap<>();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, COUNT(*) FROM panoptes_records GROUP BY job_id")) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getInt(2));
            }
            connection.commit();
        } catch (SQLException e) {
            throw readFailure("record counts", e);
        }
        Set<JobId> complete = new HashSet<>();
        for (Job job : jobs) {
            Integer count = counts.get(job.id().value());
            if (count != null && count >= job.size()) {
                complete.add(job.id());
            }
        }
        return complete;
    }

    @Override
    public synchronized long recordCount() {
        checkOpen();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM panoptes_records")) {
            rs.next();
            long n = rs.getLong(1);
            connection.commit();
            return n;
        } catch (SQLException e) {
            throw readFailure("the record count", e);
        }
    }

    @Override
    public synchronized long duplicateCount() {
        return duplicates;
    }

    @Override
    public synchronized void forEachRecord(Consumer<StoredRecord> action) {
        checkOpen();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, vignette_id, response, model, finish_reason, latency_ms, "
                     + "prompt_tokens, completion_tokens, worker_id, stored_at FROM panoptes_records "
                     + "ORDER BY stored_at, job_id, vignette_id")) {
            while (rs.next()) {
                Long prompt = getLong(rs, 7);
                Long completion = getLong(rs, 8);
                Usage usage = prompt == null && completion == null ? null
                        : new Usage(prompt == null ? 0 : prompt, completion == null ? 0 : completion);
                ResponseRecord record = new ResponseRecord(rs.getString(2), rs.getString(3), rs.getString(4),
                        rs.getString(5), getLong(rs, 6), usage);
                action.accept(new StoredRecord(JobId.of(rs.getString(1)), record, rs.getString(9),
                        Instant.ofEpochMilli(rs.getLong(10))));
            }
            connection.commit();
        } catch (SQLException e) {
            throw readFailure("the records", e);
        }
    }

    @Override
    public synchronized void forEachFailure(Consumer<JobFailure> action) {
        checkOpen();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, reason, attempts, failed_at FROM panoptes_failures "
                     + "ORDER BY job_id")) {
            while (rs.next()) {
                action.accept(new JobFailure(JobId.of(rs.getString(1)), rs.getString(2), rs.getInt(3),
                        Instant.ofEpochMilli(rs.getLong(4))));
            }
            connection.commit();
        } catch (SQLException e) {
            throw readFailure("the failures", e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            // Closing the connection closes its statements too.
            connection.close();
        } catch (SQLException e) {
            log.warn("closing result database {} failed: {}", description, e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "JdbcResultStore[" + description + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("result store " + description + " is closed");
        }
    }

    private StoreException readFailure(String what, SQLException e) {
        rollbackQuietly(e);
        return new StoreException("cannot read " + what + " from " + description + ": " + e.getMessage(), e);
    }

    private void rollbackQuietly(SQLException cause) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    private static void setLong(PreparedStatement ps, int index, Long value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, value);
        }
    }

    private static Long getLong(ResultSet rs, int index) throws SQLException {
        long v = rs.getLong(index);
        return rs.wasNull() ? null : v;
    }
}
