package dev.panoptes.control.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Properties;

/**
 * The connection of a {@link JdbcResultStore} and what its failures mean: opened and prepared
 * (SQLite's pragmas, the schema under PostgreSQL's advisory lock, the statements every write
 * uses), checked after a failure and replaced when broken, work run in one transaction
 * ({@link #write}, {@link #read}) with every failure rolled back and named (a
 * {@link RecordRejectedException} when the data is what the database refuses), and the password
 * scrubbed out of every message.
 *
 * <p><b>Threads.</b> Not thread-safe: only its store calls it, under the store's lock, and the
 * connection and statements it hands out are used within that same call, never kept. Once
 * {@link #close closed}, every operation fails with an {@link IllegalStateException}.
 */
final class StoreConnection {
    /** Logged under the store's name: what a user configures and tests capture. */
    private static final Logger log = LoggerFactory.getLogger(JdbcResultStore.class);
    /** How long checking a connection that failed may take. */
    private static final int VALIDATION_TIMEOUT_S = 5;

    private final String description;
    /** The password, only to scrub it out of messages; null when there is none. */
    private final String secret;
    /** Opens a connection, at first and whenever one broke. */
    private final JdbcResultStore.Connector connector;
    /** What to check when the database cannot be reached, for messages. */
    private final String hint;
    private final int busyTimeoutMs;
    /** Null after a replacement failed. */
    private Connection connection;
    /** The last operation failed: check the connection before the next. */
    private boolean suspect;
    private boolean sqlite;
    /** How records are found by request key on this database; set with {@link #sqlite}. */
    private RequestKeyIndex requestKeys;
    private boolean closed;
    /** Prepared once per connection (sqlite-jdbc compiles SQL on every prepare). */
    private PreparedStatement insertRecord;
    private PreparedStatement insertLeanRecord;
    private PreparedStatement clearFailure;
    private PreparedStatement anyFailure;
    private PreparedStatement insertScore;
    /** What every write transaction checks first ({@link #fence}), or null for nothing. */
    private RunFence fence;
    /** On SQLite: {@link SqlitePragmas#BULK_BATCHES_IN_A_ROW} large batches were committed in a row. */
    private boolean bulk;
    /** Batches of {@link SqlitePragmas#BULK_BATCH_ANSWERS} answers or more committed since the last smaller one. */
    private int largeInARow;

    private StoreConnection(String description, String secret, JdbcResultStore.Connector connector, String hint,
                            int busyTimeoutMs) {
        this.description = description;
        this.secret = secret == null || secret.isEmpty() ? null : secret;
        this.connector = connector;
        this.hint = hint;
        this.busyTimeoutMs = busyTimeoutMs;
    }

    /**
     * Opens the first connection and prepares it.
     *
     * @throws StoreException when the database cannot be opened or prepared (it holds a newer schema, say)
     */
    static StoreConnection open(JdbcResultStore.Connector connector, String description, String secret, String hint,
                                int busyTimeoutMs) {
        StoreConnection c = new StoreConnection(description, secret, connector, hint, busyTimeoutMs);
        try {
            c.connect();
        } catch (SQLException e) {
            throw new StoreException(scrub("cannot open result database " + description + ": " + e.getMessage()
                    + " (" + hint + ")", secret), e);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** True on SQLite, after the connection was opened. */
    boolean isSqlite() {
        return sqlite;
    }

    /** How the records are found by request key on this database, after the connection was opened. */
    RequestKeyIndex requestKeys() {
        return requestKeys;
    }

    /** The database as messages name it, without its password. */
    String description() {
        return description;
    }

    /** The connection, ready after {@link #ready()}. */
    Connection connection() {
        return connection;
    }

    /** {@link OutcomeRows#INSERT_RECORD} on the current connection. */
    PreparedStatement insertRecord() {
        return insertRecord;
    }

    /** {@link OutcomeRows#INSERT_LEAN_RECORD} on the current connection. */
    PreparedStatement insertLeanRecord() {
        return insertLeanRecord;
    }

    /** {@link OutcomeRows#ANY_FAILURE} on the current connection. */
    PreparedStatement anyFailure() {
        return anyFailure;
    }

    /** {@link OutcomeRows#CLEAR_FAILURE} on the current connection. */
    PreparedStatement clearFailure() {
        return clearFailure;
    }

    /** {@link ScoreTables#INSERT_SCORE} on the current connection. */
    PreparedStatement insertScore() {
        return insertScore;
    }

    /**
     * The connection properties of a PostgreSQL store: the credentials, and the timeouts, keepalive
     * and application name unless the URL sets them.
     */
    static Properties postgresProperties(String jdbcUrl, String user, String password, int connectTimeoutS,
                                         int socketTimeoutS) {
        Properties properties = new Properties();
        if (user != null) {
            properties.setProperty("user", user);
        }
        if (password != null) {
            properties.setProperty("password", password);
        }
        if (!jdbcUrl.contains("connectTimeout=")) {
            properties.setProperty("connectTimeout", Integer.toString(connectTimeoutS));
        }
        if (!jdbcUrl.contains("tcpKeepAlive=")) {
            // A server that vanishes is noticed, rather than a statement waiting forever.
            properties.setProperty("tcpKeepAlive", "true");
        }
        if (!jdbcUrl.contains("socketTimeout=")) {
            // Keepalives take hours by default: a statement waits no longer than this for an answer.
            properties.setProperty("socketTimeout", Integer.toString(socketTimeoutS));
        }
        if (!jdbcUrl.contains("ApplicationName=")) {
            properties.setProperty("ApplicationName", "panoptes");
        }
        return properties;
    }

    /** The URL with the value of any {@code password=} parameter replaced by {@code ***}. */
    static String redactUrl(String jdbcUrl) {
        return jdbcUrl.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }

    /**
     * Opens a connection and prepares it (the schema, the statements), replacing the one before.
     *
     * @throws SQLException when the database cannot be reached
     * @throws StoreException when it cannot be prepared (the connection is closed again)
     */
    private void connect() throws SQLException {
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

    String scrub(String message) {
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
        requestKeys = RequestKeyIndex.of(sqlite);
        if (sqlite) {
            SqlitePragmas.prepare(connection, busyTimeoutMs);
            if (bulk) {
                // A connection that replaces one in bulk keeps its settings.
                SqlitePragmas.bulk(connection);
            }
        }
        connection.setAutoCommit(false);
        try {
            if (postgres) {
                // Two stores starting at once would both try to create the tables (CREATE TABLE IF
                // NOT EXISTS is not safe against a concurrent creator on PostgreSQL); the second
                // waits here and then finds them. Released by the commit or rollback below.
                try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                    lock.setLong(1, JdbcResultStore.SCHEMA_LOCK_KEY);
                    lock.execute();
                }
            }
            StoreSchema.prepare(connection, description, requestKeys, sqlite);
            connection.commit();
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        }
        insertRecord = connection.prepareStatement(OutcomeRows.INSERT_RECORD);
        insertLeanRecord = connection.prepareStatement(OutcomeRows.INSERT_LEAN_RECORD);
        clearFailure = connection.prepareStatement(OutcomeRows.CLEAR_FAILURE);
        anyFailure = connection.prepareStatement(OutcomeRows.ANY_FAILURE);
        insertScore = connection.prepareStatement(ScoreTables.INSERT_SCORE);
        log.debug("result database {} ready (schema v{})", description, StoreSchema.VERSION);
    }

    /**
     * Told after each commit of a batch of answers: on SQLite, once
     * {@link SqlitePragmas#BULK_BATCHES_IN_A_ROW} batches in a row held
     * {@link SqlitePragmas#BULK_BATCH_ANSWERS} answers or more, this connection, and any that
     * replaces it, takes {@link SqlitePragmas#bulk}'s settings, which pay only while answers come
     * faster than commits. Setting them failing is logged and costs nothing else: the batch is
     * committed, and the settings are only a matter of speed.
     */
    void committed(int answers) {
        if (bulk || !sqlite) {
            return;
        }
        largeInARow = answers >= SqlitePragmas.BULK_BATCH_ANSWERS ? largeInARow + 1 : 0;
        if (largeInARow < SqlitePragmas.BULK_BATCHES_IN_A_ROW) {
            return;
        }
        bulk = true;
        try {
            SqlitePragmas.bulk(connection);
            log.info("result database {}: {} batches in a row of {} answers or more, so from now on a page cache of"
                    + " up to {} MiB and a checkpoint every {} WAL pages", description,
                    SqlitePragmas.BULK_BATCHES_IN_A_ROW, SqlitePragmas.BULK_BATCH_ANSWERS,
                    -SqlitePragmas.BULK_CACHE_SIZE / 1024, SqlitePragmas.BULK_WAL_AUTOCHECKPOINT);
        } catch (SQLException e) {
            log.warn("result database {}: cannot set the page cache and checkpoint interval for large batches ({});"
                    + " storing goes on with SQLite's defaults", description, scrub(e.getMessage()));
        }
    }

    /**
     * From now on every write transaction first checks, and locks against a takeover until it
     * ends, that the lease of {@code runId} is still at {@code epoch} ({@link RunLeases#CHECK}), and
     * may idle no longer than {@code idleMs} inside it.
     */
    void fence(String runId, long epoch, long idleMs) {
        this.fence = new RunFence(runId, epoch, idleMs);
    }

    /**
     * The first statement of a write transaction (after {@link #ready()}): when fenced, checks the
     * lease ({@link RunFence}). On failure the transaction is rolled back.
     *
     * @throws StoreFencedException when another coordinator took the run over
     * @throws StoreException when the check cannot be made (a retry may mend it)
     */
    void checkFence(String what) {
        if (fence == null) {
            return;
        }
        try {
            fence.check(connection);
        } catch (SQLException e) {
            rollbackQuietly(e);
            throw new StoreException(scrub("cannot " + what + " in " + description + ": checking the run's lease"
                    + " failed: " + e.getMessage()), e);
        } catch (StoreFencedException e) {
            rollbackQuietly(e);
            throw e;
        }
    }

    /** Work in one transaction, committed; on failure rolled back and reported as what it was for. */
    void write(String what, SqlWork work) {
        write(what, work, () -> { });
    }

    /**
     * Work in one transaction, committed; on failure rolled back and reported as what it was for.
     *
     * @param inDoubt run when the commit itself failed, so that the work may have been committed
     * @return true (it throws otherwise)
     */
    boolean write(String what, SqlWork work, Runnable inDoubt) {
        ready();
        checkFence(what);
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
        } catch (StoreException e) {
            // Already named by the work (a refusal of its data, say).
            rollbackQuietly(e);
            throw e;
        } catch (RuntimeException e) {
            // Not the database refusing the data: a driver's or this code's fault, which the
            // caller may retry as it retries the database being away. Whatever the work did so far
            // must not be committed by the next operation.
            rollbackQuietly(e);
            throw new StoreException(scrub("cannot " + what + " in " + description + ": " + e), e);
        } catch (Error e) {
            rollbackQuietly(e);
            throw e;
        }
    }

    <T> T read(String what, SqlQuery<T> query) {
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
    interface SqlWork {
        void run() throws SQLException;
    }

    @FunctionalInterface
    interface SqlQuery<T> {
        T get() throws SQLException;
    }

    /**
     * True when a failed write failed for its data, so that writing it again cannot help: the
     * database's own refusal of a value it cannot hold or a constraint it breaks (SQLSTATE class 22,
     * data exception, and 23, integrity constraint violation; SQLite's TOOBIG, CONSTRAINT and
     * MISMATCH, which its driver reports without a SQLSTATE), or this store's code finding a
     * vignette's data unstorable, which it reports as a SQLSTATE 22 {@link java.sql.SQLDataException}.
     * Not the data's fault, and so a store failure that retrying may mend: the database
     * unreachable, busy, full or closed, a statement timed out, and any exception that is not a
     * {@link SQLException} (a driver's bug, say).
     */
    boolean refusesTheData(Throwable e) {
        if (!(e instanceof SQLException se)) {
            return false;
        }
        String state = se.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
            return true;
        }
        int code = se.getErrorCode() & 0xff;
        return sqlite && (code == 18 || code == 19 || code == 20);
    }

    /** Closes the connection (and so its statements); idempotent. */
    void close() {
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
    void ready() {
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

    StoreException readFailure(String what, SQLException e) {
        rollbackQuietly(e);
        return new StoreException(scrub("cannot read " + what + " from " + description + ": " + e.getMessage()), e);
    }

    void rollbackQuietly(Throwable cause) {
        suspect = true;
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }
}
