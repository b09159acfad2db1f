package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.ArrayList;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A durable {@link ResultStore} on plain JDBC. The library carries no driver: SQLite
 * ({@code org.xerial:sqlite-jdbc}) is the embedded default that the binary brings, and
 * PostgreSQL ({@code org.postgresql:postgresql}, see {@link #openPostgres}) is the shared one. The
 * SQL is the same on both ({@code INSERT ... ON CONFLICT DO NOTHING}).
 *
 * <p>The schema is created on first use and versioned in {@code panoptes_schema}; a database
 * written by a newer schema is refused rather than misread. Each outcome is stored in one
 * transaction, so a crash never leaves half a job, and every failed operation rolls back (on
 * PostgreSQL an error aborts the whole transaction). On SQLite the journal is WAL and writers
 * wait for each other (busy timeout) instead of failing, so two processes may share a file. On
 * PostgreSQL any number of stores may write one database at once: a record stored by one is a
 * duplicate for the others, and the schema is prepared under a transaction-scoped advisory lock,
 * so that stores starting together do not race to create it.
 *
 * <p><b>Failures.</b> A connection that broke (a server restarted, a backend terminated, a
 * network cut) is replaced: after an operation fails, the next one checks the connection
 * ({@link Connection#isValid}) and opens a new one when it is closed or unusable, so a caller
 * retrying a write (as the scheduler does) gets through once the database is back. Writes may be
 * repeated safely: a record already there is kept and counted a duplicate, except that a write
 * whose commit failed midway (its outcome unknown) and is repeated does not count its own
 * records, had they been committed after all, as duplicates; a grade likewise. A write the
 * database refuses for its data (a value it cannot hold, such as a NUL character in PostgreSQL
 * text, or a record that cannot be scored) throws {@link RecordRejectedException}: repeating it
 * cannot help. On PostgreSQL a statement that gets no answer for {@value #SOCKET_TIMEOUT_S} s
 * (unless the URL sets {@code socketTimeout}) fails, so that a server that vanished without a
 * word is noticed.
 *
 * <p>Credentials are never printed: {@link #toString()} and every error message name the
 * database without its password.
 *
 * <p>Thread-safe: operations are serialised on one connection at a time.
 */
public final class JdbcResultStore implements ResultStore {
    private static final Logger log = LoggerFactory.getLogger(JdbcResultStore.class);
    /** The schema version this code writes and reads. */
    public static final int SCHEMA_VERSION = StoreSchema.VERSION;
    /** How long a SQLite writer waits for another one (another process on the file) by default. */
    static final Duration DEFAULT_BUSY_TIMEOUT = Duration.ofSeconds(30);
    /**
     * The PostgreSQL advisory lock (transaction-scoped) under which the schema is created or
     * upgraded: any fixed 64-bit number that other applications are unlikely to use
     * ("panoptes" in ASCII).
     */
    static final long SCHEMA_LOCK_KEY = 0x70616e6f70746573L;
    /** How long opening a PostgreSQL connection may take, unless the URL says otherwise. */
    private static final int CONNECT_TIMEOUT_S = 10;
    /** How long a PostgreSQL statement may wait for the server, unless the URL says otherwise. */
    static final int SOCKET_TIMEOUT_S = 120;
    /** How long checking a connection that failed may take. */
    private static final int VALIDATION_TIMEOUT_S = 5;
    private static final String HINT_FILE = "is the JDBC driver on the class path and the path writable?";
    private static final String HINT_SERVER =
            "is the server running and reachable, and are the database, user and password right?";

    private static final String INSERT_RECORD = "INSERT INTO panoptes_records (job_id, vignette_id, response, model, "
            + "finish_reason, latency_ms, prompt_tokens, completion_tokens, worker_id, stored_at, run_id, run_model, "
            + "epoch, prompt, expected, metadata, scorer, score, explanation, error) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, vignette_id) DO NOTHING";
    private static final String UPSERT_FAILURE = "INSERT INTO panoptes_failures (job_id, reason, attempts, failed_at, "
            + "run_id, run_model) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET reason = excluded.reason, "
            + "attempts = excluded.attempts, failed_at = excluded.failed_at, "
            + "run_id = COALESCE(excluded.run_id, panoptes_failures.run_id), "
            + "run_model = COALESCE(excluded.run_model, panoptes_failures.run_model)";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String description;
    /** The password, only to scrub it out of messages; null when there is none. */
    private final String secret;
    /** Opens a connection, at first and whenever one broke. */
    private final Connector connector;
    /** What to check when the database cannot be reached, for messages. */
    private final String hint;
    private final int busyTimeoutMs;
    /** Null after a replacement failed; guarded by {@code this}. */
    private Connection connection;
    /** The last operation failed: check the connection before the next; guarded by {@code this}. */
    private boolean suspect;
    /** Guarded by {@code this}. */
    private boolean sqlite;
    /**
     * Jobs whose records' commit failed midway, with the fingerprints (worker, time) of the rows
     * it wrote: a later write of the job that finds such a row counts it stored, not duplicate.
     * Guarded by {@code this}.
     */
    private final Map<String, List<InDoubt>> recordsInDoubt = new HashMap<>();
    /** Grades (job id, NUL, vignette id) whose commit failed midway; guarded by {@code this}. */
    private final Set<String> gradesInDoubt = new HashSet<>();
    private final Clock clock;
    /** Prepared once (sqlite-jdbc compiles SQL on every prepare); guarded by {@code this}. */
    private PreparedStatement insertRecord;
    /** Guarded by {@code this}. */
    private PreparedStatement clearFailure;
    /** Set once before use; see {@link #withScoring}. */
    private volatile RecordScoring scoring = RecordScoring.NONE;
    /** Guarded by {@code this}. */
    private long duplicates;
    /** Guarded by {@code this}. */
    private boolean closed;

    private JdbcResultStore(String description, String secret, Connector connector, String hint, int busyTimeoutMs,
                            Clock clock) {
        this.description = description;
        this.secret = secret == null || secret.isEmpty() ? null : secret;
        this.connector = connector;
        this.hint = hint;
        this.busyTimeoutMs = busyTimeoutMs;
        this.clock = clock;
    }

    /** Opens a JDBC connection. */
    @FunctionalInterface
    interface Connector {
        Connection connect() throws SQLException;
    }

    /** The row a write whose commit failed midway may have left: by whom and when. */
    private record InDoubt(String workerId, long storedAt) {
    }

    /**
     * Opens (creating when needed) a SQLite database file. Needs the SQLite JDBC driver on the
     * class path.
     *
     * @throws StoreException when the file cannot be opened or holds a newer schema
     */
    public static JdbcResultStore openSqlite(Path file) {
        return openSqlite(file, DEFAULT_BUSY_TIMEOUT);
    }

    /**
     * Opens a SQLite database file as {@link #openSqlite(Path)} does, with another busy timeout:
     * how long a write waits while another connection (another process) holds the file's write
     * lock before it fails (and, under a scheduler, is retried).
     *
     * @throws IllegalArgumentException when the timeout is negative or above {@link Integer#MAX_VALUE} ms
     * @throws StoreException when the file cannot be opened or holds a newer schema
     */
    public static JdbcResultStore openSqlite(Path file, Duration busyTimeout) {
        if (busyTimeout.isNegative() || busyTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the SQLite busy timeout must be 0 to " + Integer.MAX_VALUE
                    + " ms, got " + busyTimeout);
        }
        String url = "jdbc:sqlite:" + file.toAbsolutePath();
        return open(() -> DriverManager.getConnection(url), redactUrl(url), null, HINT_FILE,
                (int) busyTimeout.toMillis(), Clock.systemUTC());
    }

    /**
     * Opens a store on any JDBC URL whose driver is on the class path.
     *
     * @throws StoreException when the database cannot be opened or holds a newer schema
     */
    public static JdbcResultStore open(String jdbcUrl, Clock clock) {
        return open(jdbcUrl, new Properties(), null, clock, HINT_FILE);
    }

    /**
     * Opens a PostgreSQL database, creating the tables when missing. Any number of stores, in any
     * number of processes, may share one database. Needs the PostgreSQL JDBC driver on the class
     * path. The password is sent to the server only: it is never printed, and scrubbed from every
     * error message.
     *
     * @param jdbcUrl  {@code jdbc:postgresql://host[:port]/dbname[?params]}, without a password
     * @param user     the user to connect as; null to take it from the URL's {@code user=} or the
     *                 driver's default
     * @param password the user's password; null for none (trust or peer authentication)
     * @throws StoreException when the database cannot be reached or holds a newer schema
     */
    public static JdbcResultStore openPostgres(String jdbcUrl, String user, String password) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL (jdbc:postgresql://host/dbname): "
                    + (jdbcUrl == null ? null : redactUrl(jdbcUrl)));
        }
        Properties properties = new Properties();
        if (user != null) {
            properties.setProperty("user", user);
        }
        if (password != null) {
            properties.setProperty("password", password);
        }
        if (!jdbcUrl.contains("connectTimeout=")) {
            properties.setProperty("connectTimeout", Integer.toString(CONNECT_TIMEOUT_S));
        }
        if (!jdbcUrl.contains("tcpKeepAlive=")) {
            // A server that vanishes is noticed, rather than a statement waiting forever.
            properties.setProperty("tcpKeepAlive", "true");
        }
        if (!jdbcUrl.contains("socketTimeout=")) {
            // Keepalives take hours by default: a statement waits no longer than this for an answer.
            properties.setProperty("socketTimeout", Integer.toString(SOCKET_TIMEOUT_S));
        }
        if (!jdbcUrl.contains("ApplicationName=")) {
            properties.setProperty("ApplicationName", "panoptes");
        }
        return open(jdbcUrl, properties, password, Clock.systemUTC(), HINT_SERVER);
    }

    private static JdbcResultStore open(String jdbcUrl, Properties properties, String secret, Clock clock,
                                        String hint) {
        String description = redactUrl(jdbcUrl) + (properties.getProperty("user") == null ? ""
                : " as user " + properties.getProperty("user"));
        return open(() -> DriverManager.getConnection(jdbcUrl, properties), description, secret, hint,
                (int) DEFAULT_BUSY_TIMEOUT.toMillis(), clock);
    }

    /**
     * Opens a store whose connections come from {@code connector}, at first and whenever one
     * broke; for tests that need a connection that fails in a given way.
     */
    static JdbcResultStore open(Connector connector, String description, String secret, String hint,
                                int busyTimeoutMs, Clock clock) {
        JdbcResultStore store = new JdbcResultStore(description, secret, connector, hint, busyTimeoutMs, clock);
        try {
            store.connect();
        } catch (SQLException e) {
            throw new StoreException(scrub("cannot open result database " + description + ": " + e.getMessage()
                    + " (" + hint + ")", secret), e);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    /**
     * Opens a connection and prepares it (the schema, the statements), replacing the one before.
     *
     * @throws SQLException when the database cannot be reached
     * @throws StoreException when it cannot be prepared (the connection is closed again)
     */
    private synchronized void connect() throws SQLException {
        Connection fresh = connector.connect();
        connection = fresh;
        try {
            prepare();
        } catch (SQLException | RuntimeException e) {
            connection = null;
            closeQuietly(fresh);
            if (e instanceof StoreException se) {
                throw se;
            }
            throw new StoreException(scrub("cannot prepare result database " + description + ": "
                    + e.getMessage()), e);
        }
    }

    /** The URL with the value of any {@code password=} parameter replaced by {@code ***}. */
    static String redactUrl(String jdbcUrl) {
        return jdbcUrl.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }

    private String scrub(String message) {
        return scrub(message, secret);
    }

    /** The message with every occurrence of the secret replaced by {@code ***}. */
    private static String scrub(String message, String secret) {
        return secret == null || secret.isEmpty() || message == null ? message : message.replace(secret, "***");
    }

    private void prepare() throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT);
        sqlite = product.contains("sqlite");
        boolean postgres = product.contains("postgresql");
        try (Statement s = connection.createStatement()) {
            if (sqlite) {
                s.execute("PRAGMA busy_timeout = " + busyTimeoutMs);
                s.execute("PRAGMA journal_mode = WAL");
                s.execute("PRAGMA synchronous = NORMAL");
            }
        }
        connection.setAutoCommit(false);
        try {
            if (postgres) {
                // Two stores starting at once would both try to create the tables (CREATE TABLE IF
                // NOT EXISTS is not safe against a concurrent creator on PostgreSQL); the second
                // waits here and then finds them. Released by the commit or rollback below.
                try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                    lock.setLong(1, SCHEMA_LOCK_KEY);
                    lock.execute();
                }
            }
            StoreSchema.prepare(connection, description);
            connection.commit();
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        }
        insertRecord = connection.prepareStatement(INSERT_RECORD);
        clearFailure = connection.prepareStatement("DELETE FROM panoptes_failures WHERE job_id = ?");
        log.debug("result database {} ready (schema v{})", description, SCHEMA_VERSION);
    }

    /**
     * Scores each record as it is stored (see {@link RecordScoring}); call before storing.
     *
     * @return this store
     */
    public JdbcResultStore withScoring(RecordScoring scoring) {
        this.scoring = scoring == null ? RecordScoring.NONE : scoring;
        return this;
    }

    @Override
    public Receipt record(JobOutcome outcome, String workerId) {
        return store(null, outcome, workerId);
    }

    /** Stores the records with their job's context, scored by {@link #withScoring}'s scoring. */
    @Override
    public Receipt record(Job job, JobOutcome outcome, String workerId) {
        return store(job, outcome, workerId);
    }

    private synchronized Receipt store(Job job, JobOutcome outcome, String workerId) {
        ready();
        long now = clock.millis();
        PreparedStatement insert = insertRecord;
        Map<String, Vignette> vignettes = job == null ? Map.of() : vignettesById(job);
        String jobId = outcome.jobId().value();
        List<InDoubt> doubts = recordsInDoubt.get(jobId);
        boolean committing = false;
        try {
            int stored = 0;
            int dup = 0;
            for (ResponseRecord r : inKeyOrder(outcome.records())) {
                insert.setString(1, outcome.jobId().value());
                insert.setString(2, r.vignetteId());
                insert.setString(3, r.response());
                insert.setString(4, r.model());
                insert.setString(5, r.finishReason());
                RecordRows.setLong(insert, 6, r.latencyMs());
                RecordRows.setLong(insert, 7, r.usage() == null ? null : r.usage().promptTokens());
                RecordRows.setLong(insert, 8, r.usage() == null ? null : r.usage().completionTokens());
                insert.setString(9, workerId);
                insert.setLong(10, now);
                Vignette v = vignettes.get(r.vignetteId());
                insert.setString(11, job == null ? null : job.runId());
                insert.setString(12, job == null ? null : job.model());
                insert.setInt(13, job == null ? 0 : job.epoch());
                insert.setString(14, v == null ? null : v.displayPrompt());
                insert.setString(15, v == null ? null : v.expected());
                insert.setString(16, v == null || v.metadata().isEmpty() ? null : metadataJson(v));
                ScoreEntry score = v == null ? null : scoring.score(v, r);
                insert.setString(17, score == null ? null : score.scorer());
                RecordRows.setDouble(insert, 18, score == null ? null : score.score());
                insert.setString(19, score == null ? null : score.explanation());
                insert.setString(20, r.error());
                if (insert.executeUpdate() == 1 || doubts != null && leftByDoubt(jobId, r.vignetteId(), doubts)) {
                    stored++;
                } else {
                    dup++;
                }
            }
            clearFailure.setString(1, jobId);
            clearFailure.executeUpdate();
            committing = true;
            connection.commit();
            recordsInDoubt.remove(jobId);
            duplicates += dup;
            return new Receipt(stored, dup);
        } catch (SQLException | RuntimeException e) {
            SQLException cause = e instanceof SQLException se ? se : new SQLException(e.toString(), e);
            rollbackQuietly(cause);
            if (committing) {
                // The server may have committed before the connection failed: a repeat of this
                // write must not count these rows, if they are there, as another delivery's.
                recordsInDoubt.computeIfAbsent(jobId, k -> new ArrayList<>(1)).add(new InDoubt(workerId, now));
            }
            String message = scrub("cannot store the outcome of job " + outcome.jobId() + " from worker " + workerId
                    + " in " + description + ": " + e.getMessage());
            if (refusesTheData(e)) {
                throw new RecordRejectedException(message, e);
            }
            throw new StoreException(message, e);
        }
    }

    /** True when the stored record of this vignette is the one a write in doubt left. */
    private boolean leftByDoubt(String jobId, String vignetteId, List<InDoubt> doubts) throws SQLException {
        try (PreparedStatement q = connection.prepareStatement(
                "SELECT worker_id, stored_at FROM panoptes_records WHERE job_id = ? AND vignette_id = ?")) {
            q.setString(1, jobId);
            q.setString(2, vignetteId);
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() && doubts.contains(new InDoubt(rs.getString(1), rs.getLong(2)));
            }
        }
    }

    /**
     * True when a failed write failed for its data, so that writing it again cannot help: a
     * value the database cannot hold or a constraint it breaks (SQLSTATE classes 22 and 23;
     * SQLite's TOOBIG, CONSTRAINT and MISMATCH), or an exception of this store's own code while
     * preparing the rows (scoring them, say). Not: the database unreachable, busy, full or closed.
     */
    private boolean refusesTheData(Exception e) {
        if (!(e instanceof SQLException se)) {
            return true;
        }
        String state = se.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
            return true;
        }
        int code = se.getErrorCode() & 0xff;
        return sqlite && (code == 18 || code == 19 || code == 20);
    }

    /**
     * The records sorted by vignette id: two stores writing the same job on PostgreSQL then lock
     * its rows in the same order, and so wait for each other instead of deadlocking.
     */
    private static List<ResponseRecord> inKeyOrder(List<ResponseRecord> records) {
        List<ResponseRecord> sorted = new ArrayList<>(records);
        sorted.sort(java.util.Comparator.comparing(ResponseRecord::vignetteId,
                java.util.Comparator.nullsFirst(java.util.Comparator.naturalOrder())));
        return sorted;
    }

    private static Map<String, Vignette> vignettesById(Job job) {
        Map<String, Vignette> byId = new HashMap<>();
        for (Vignette v : job.spec().vignettes()) {
            byId.put(v.id(), v);
        }
        return byId;
    }

    private static String metadataJson(Vignette v) {
        try {
            return JSON.writeValueAsString(v.metadata());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("vignette '" + v.id() + "' has metadata that is not JSON: "
                    + e.getOriginalMessage(), e);
        }
    }

    /**
     * Stores the grade of an answer that waited for one (a model-graded score), unless it has
     * one already, or a reason for having none: the first verdict stands, as the first record does.
     *
     * @return true when the grade was stored; false when the answer is missing or already graded
     * @throws StoreException when the store cannot write
     */
    public synchronized boolean recordGrade(JobId jobId, String vignetteId, ScoreEntry grade) {
        String key = jobId.value() + '\u0000' + vignetteId;
        boolean[] stored = {false};
        boolean committed = write("store the grade of " + jobId + "/" + vignetteId, () -> {
            stored[0] = RecordRows.grade(connection, jobId, vignetteId, grade)
                    // This very grade, committed after all by a write whose commit failed midway.
                    || gradesInDoubt.contains(key) && grade.equals(RecordRows.score(connection, jobId, vignetteId));
        }, () -> gradesInDoubt.add(key));
        if (committed) {
            gradesInDoubt.remove(key);
        }
        return stored[0];
    }

    /**
     * Replaces the score of every stored record of a run (of every run when {@code runId} is
     * null) with what {@code scorer} gives, in one transaction; a null from it clears the score.
     * Nothing is sent to any model.
     *
     * @return the number of records scored again
     * @throws StoreException when the store cannot read or write
     */
    public synchronized int rescore(String runId, Function<StoredRecord, ScoreEntry> scorer) {
        List<StoredRecord> records = new ArrayList<>();
        forEachRecord(runId, records::add);
        write("store new scores", () -> RecordRows.rescore(connection, records, scorer));
        return records.size();
    }

    @Override
    public synchronized void recordFailure(Job job, String reason, int attempts) {
        upsertFailure(job.id(), reason, attempts, job.runId(), job.model());
    }

    @Override
    public synchronized void recordFailure(JobId jobId, String reason, int attempts) {
        upsertFailure(jobId, reason, attempts, null, null);
    }

    private synchronized void upsertFailure(JobId jobId, String reason, int attempts, String runId, String model) {
        ready();
        try (PreparedStatement upsert = connection.prepareStatement(UPSERT_FAILURE)) {
            upsert.setString(1, jobId.value());
            upsert.setString(2, reason);
            upsert.setInt(3, attempts);
            upsert.setLong(4, clock.millis());
            upsert.setString(5, runId);
            upsert.setString(6, model);
            upsert.executeUpdate();
            connection.commit();
        } catch (SQLException e) {
            rollbackQuietly(e);
            String message = scrub("cannot record the failure of job " + jobId + " in " + description + ": "
                    + e.getMessage());
            if (refusesTheData(e)) {
                throw new RecordRejectedException(message, e);
            }
            throw new StoreException(message, e);
        }
    }

    @Override
    public synchronized Set<String> storedVignetteIds(JobId jobId) {
        ready();
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
        ready();
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
        ready();
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
    public void forEachRecord(Consumer<StoredRecord> action) {
        forEachRecord(null, action);
    }

    /**
     * Every stored record of a run ({@code runId}; every run when null), in the order of storing,
     * with its context and score.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized void forEachRecord(String runId, Consumer<StoredRecord> action) {
        ready();
        try (PreparedStatement q = connection.prepareStatement(RecordRows.SELECT
                + (runId == null ? "" : " WHERE run_id = ?") + " ORDER BY stored_at, job_id, vignette_id")) {
            if (runId != null) {
                q.setString(1, runId);
            }
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    action.accept(RecordRows.storedRecord(rs));
                }
            }
            connection.commit();
        } catch (SQLException e) {
            throw readFailure("the records", e);
        }
    }

    /**
     * Notes that a run started (or started again): what it asks, for the report and the export.
     * A run started again replaces its entry.
     *
     * @throws StoreException when the store cannot write
     */
    public synchronized void recordRun(RunEntry run) {
        write("note run " + run.runId(), () -> RunTables.upsertRun(connection, run));
    }

    /** The runs noted by {@link #recordRun}, most recently started first. @throws StoreException */
    public synchronized List<RunEntry> runs() {
        return read("the runs", () -> RunTables.runs(connection));
    }

    /**
     * Adds a worker's failures and quarantines during (this part of) a run to what the store
     * holds for it.
     *
     * @throws StoreException when the store cannot write
     */
    public synchronized void addWorkerEvents(String runId, String workerId, long failures, long quarantines) {
        write("store the events of worker " + workerId,
                () -> RunTables.addWorkerEvents(connection, runId, workerId, failures, quarantines));
    }

    /**
     * Each worker's failures and quarantines in a run, by worker id.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized List<WorkerEventCount> workerEvents(String runId) {
        return read("worker events", () -> RunTables.workerEvents(connection, runId));
    }

    /** Work in one transaction, committed; on failure rolled back and reported as what it was for. */
    private void write(String what, SqlWork work) {
        write(what, work, () -> { });
    }

    /**
     * Work in one transaction, committed; on failure rolled back and reported as what it was for.
     *
     * @param inDoubt run when the commit itself failed, so that the work may have been committed
     * @return true (it throws otherwise)
     */
    private boolean write(String what, SqlWork work, Runnable inDoubt) {
        ready();
        boolean committing = false;
        try {
            work.run();
            committing = true;
            connection.commit();
            return true;
        } catch (SQLException e) {
            rollbackQuietly(e);
            if (committing) {
                inDoubt.run();
            }
            String message = scrub("cannot " + what + " in " + description + ": " + e.getMessage());
            if (refusesTheData(e)) {
                throw new RecordRejectedException(message, e);
            }
            throw new StoreException(message, e);
        } catch (RuntimeException e) {
            // Whatever the work did so far must not be committed by the next operation.
            rollbackQuietly(e);
            throw e;
        }
    }

    private <T> T read(String what, SqlQuery<T> query) {
        ready();
        try {
            T result = query.get();
            connection.commit();
            return result;
        } catch (SQLException e) {
            throw readFailure(what, e);
        }
    }

    @FunctionalInterface
    private interface SqlWork {
        void run() throws SQLException;
    }

    @FunctionalInterface
    private interface SqlQuery<T> {
        T get() throws SQLException;
    }

    @Override
    public synchronized void forEachFailure(Consumer<JobFailure> action) {
        ready();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT job_id, reason, attempts, failed_at, run_id, run_model "
                     + "FROM panoptes_failures ORDER BY job_id")) {
            while (rs.next()) {
                action.accept(new JobFailure(JobId.of(rs.getString(1)), rs.getString(2), rs.getInt(3),
                        Instant.ofEpochMilli(rs.getLong(4)), rs.getString(5), rs.getString(6)));
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
        if (connection == null) {
            return;
        }
        try {
            // Closing the connection closes its statements too.
            connection.close();
        } catch (SQLException e) {
            log.warn("closing result database {} failed: {}", description, scrub(e.getMessage()));
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

    /**
     * Checks that the store is open and, after a failure, that its connection still works,
     * replacing it when it does not (closed, or failing {@link Connection#isValid}).
     *
     * @throws IllegalStateException when the store is closed
     * @throws StoreException when a new connection cannot be had (the next operation tries again)
     */
    private void ready() {
        checkOpen();
        if (!suspect && connection != null) {
            return;
        }
        if (connection != null && usable(connection)) {
            suspect = false;
            return;
        }
        log.info("the connection to result database {} is broken; opening a new one", description);
        if (connection != null) {
            closeQuietly(connection);
            connection = null;
        }
        try {
            connect();
        } catch (SQLException | StoreException e) {
            throw new StoreException(scrub("cannot reconnect to result database " + description + ": "
                    + e.getMessage() + " (" + hint + ")"), e);
        }
        suspect = false;
        log.info("reconnected to result database {}", description);
    }

    private static boolean usable(Connection c) {
        try {
            return !c.isClosed() && c.isValid(VALIDATION_TIMEOUT_S);
        } catch (SQLException e) {
            return false;
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // It is being replaced because it failed; how it fails to close adds nothing.
        }
    }

    private StoreException readFailure(String what, SQLException e) {
        rollbackQuietly(e);
        return new StoreException(scrub("cannot read " + what + " from " + description + ": " + e.getMessage()), e);
    }

    private void rollbackQuietly(Exception cause) {
        suspect = true;
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }
}
