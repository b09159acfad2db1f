package dev.panoptes.control.store;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
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
 * transaction, or many together ({@link #recordAll}: one commit for a batch, the scheduler's
 * writer's way), so a crash never leaves half a job, and every failed operation rolls back (on
 * PostgreSQL an error aborts the whole transaction). On SQLite the journal is WAL and writers
 * wait for each other (busy timeout) instead of failing, so two processes may share a file.
 *
 * <p><b>Durability.</b> SQLite runs with {@code synchronous = NORMAL}, deliberately: in WAL mode a
 * commit is then a write into the WAL file without an fsync (the WAL is synced at checkpoints). A
 * committed transaction is in the operating system's hands, so it survives the process being
 * killed (kill -9, a crash of the JVM), which is what resume relies on: an answer acknowledged as
 * stored is there when the run is started again. It does not promise to survive an operating
 * system crash or a power cut: the last transactions before one may be lost (the database stays
 * consistent), and resume then sends their jobs again, as for answers never stored; an fsync per
 * commit ({@code FULL}) would cost a disk flush per batch to cover a failure the rest of a run
 * does not survive either. Once eight batches in a row of 256 answers or more have committed,
 * the WAL is checkpointed every 16,000 pages rather than SQLite's 1,000 ({@code SqlitePragmas}),
 * so what such a crash may lose is up to that much: some thirty batches of a fleet's answers.
 * PostgreSQL keeps its server's own setting (by default each commit is flushed). On
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
 * text) throws {@link RecordRejectedException}: repeating it cannot help; any other failure,
 * a driver's exception included, is a {@link StoreException} that a retry may mend. A scorer's
 * failure is never the store's: the answer is stored unscored, with the reason
 * ({@link StoreScoring}). On PostgreSQL a statement that gets no answer for {@value #SOCKET_TIMEOUT_S} s
 * (unless the URL sets {@code socketTimeout}) fails, so that a server that vanished without a
 * word is noticed.
 *
 * <p><b>Scorings.</b> Scores are not part of the answers: each run's answers carry any number of
 * scorings ({@link Scoring}), numbered from 1, each with its scorer and time. Answers are scored
 * as they are stored (see {@link #withScoring}), just before the transaction that stores them and
 * their scores into the run's current scoring; {@link #newScoring} and {@link #rescore} add a scoring and never change an earlier
 * one; a judge's grades go into a given scoring ({@link #recordGrade(JobId, String, int,
 * ScoreEntry)}). Readers pick a scoring ({@link #forEachRecord(String, int, Consumer)}), by
 * default the latest. Failed answers are scored by one rule, {@link FailedAnswers}. Each run's
 * manifest is kept with it ({@link #recordRun}, {@link RunEntry#manifest()}); the runs are listed by
 * {@link #runs()} and one is removed with all it holds by {@link #deleteRun}.
 *
 * <p>This class is the store's API and its lock; its length is that API's documentation, each method
 * a few lines under the lock. The work is in package-private classes:
 * {@link StoreConnection} (the connection, its transactions, reconnecting, and what a failure
 * means), {@link OutcomeWriter} (an outcome's records and scores in one transaction), and the SQL
 * by table: {@link OutcomeRows} (records and failures as written), {@link RecordRows} (records as
 * read), {@link ScoreTables} (scorings and scores), {@link RunTables} (runs and worker events)
 * and {@link StoreSchema}; {@link RequestKeyIndex} is how the response cache finds answers by
 * request key, the one thing SQLite and PostgreSQL do differently (SQLite keys them in bulk when a
 * sitting ends and before the cache looks up).
 *
 * <p>Credentials are never printed: {@link #toString()} and every error message name the
 * database without its password.
 *
 * <p><b>Threads.</b> Any thread may call any method. Each operation holds the store's monitor
 * for the whole of its transaction, so operations run one at a time on the one connection: a
 * scheduler's writer thread and any reader take turns. The consumers given to the
 * {@code forEach...} methods, and the functions that score a new scoring, run on the calling
 * thread inside that lock and transaction: a slow one holds up every other caller, and one that
 * waits for another thread using this store never returns. The {@link RecordScoring} of
 * {@link #recordAll} runs on the calling thread before the lock is taken. {@link #withScoring} is set once,
 * before storing.
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

    /** The connection, its transactions and what its failures mean; used under {@code this}. */
    private final StoreConnection db;
    /** Writes outcomes with their scores; used under {@code this}. */
    private final OutcomeWriter outcomes;
    /** Grades (job id, NUL, vignette id, NUL, scoring) whose commit failed midway; guarded by {@code this}. */
    private final Set<String> gradesInDoubt = new HashSet<>();
    private final Clock clock;
    /** Set once before use; see {@link #withScoring}. */
    private volatile RecordScoring scoring = RecordScoring.NONE;
    /** Guarded by {@code this}. */
    private long duplicates;
    /** Told of each outcome committed; set once before use, see {@link #onStored}. */
    private volatile StoredAnswers storedAnswers;

    private JdbcResultStore(StoreConnection db, Clock clock) {
        this.db = db;
        this.clock = clock;
        this.outcomes = new OutcomeWriter(db, clock);
    }

    /** Opens a JDBC connection. */
    @FunctionalInterface
    interface Connector {
        Connection connect() throws SQLException;
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
        Properties properties = StoreConnection.postgresProperties(jdbcUrl, user, password, CONNECT_TIMEOUT_S,
                SOCKET_TIMEOUT_S);
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
        return new JdbcResultStore(StoreConnection.open(connector, description, secret, hint, busyTimeoutMs), clock);
    }

    /** The URL with the value of any {@code password=} parameter replaced by {@code ***}. */
    static String redactUrl(String jdbcUrl) {
        return StoreConnection.redactUrl(jdbcUrl);
    }

    /**
     * Scores each record as it is stored (see {@link RecordScoring}), into the current scoring of
     * its run (the latest, or the one this store made last; a run without any gets its first,
     * named {@link RecordScoring#spec()}), stored in the transaction that stores the record. A
     * failed answer is not given to the scoring: see {@link FailedAnswers}; an answer the scoring
     * throws on is stored unscored with the reason ({@link StoreScoring}). Call before storing.
     *
     * @return this store
     */
    public JdbcResultStore withScoring(RecordScoring scoring) {
        this.scoring = scoring == null ? RecordScoring.NONE : scoring;
        return this;
    }

    /**
     * Tells {@code listener} of every outcome this store commits from now on (by {@link #record},
     * {@link #recordAll} or the response cache), with the score each answer was stored with: see
     * {@link StoredAnswers} for when and on which thread. Call before storing; null for none.
     *
     * @return this store
     */
    public JdbcResultStore onStored(StoredAnswers listener) {
        this.storedAnswers = listener;
        return this;
    }

    /**
     * Fences every write of this store by the lease of {@code runId} ({@link RunLeases}): each
     * write transaction first checks, holding the lease's row against a takeover until it commits,
     * that the run's epoch is still {@code epoch}, and throws {@link StoreFencedException} (storing
     * nothing) once another coordinator took the run over. A write transaction may idle no longer
     * than {@code idleInTransactionMs}, so that a coordinator frozen inside one holds up a takeover
     * no longer than that. PostgreSQL only; call before storing, on any thread.
     *
     * @return this store
     * @throws IllegalArgumentException when the epoch or the idle time is not positive
     */
    public synchronized JdbcResultStore fencedBy(String runId, long epoch, long idleInTransactionMs) {
        if (epoch < 1 || idleInTransactionMs < 1) {
            throw new IllegalArgumentException("a fence needs a positive epoch and idle time, not " + epoch
                    + " and " + idleInTransactionMs + " ms");
        }
        db.fence(java.util.Objects.requireNonNull(runId, "runId"), epoch, idleInTransactionMs);
        return this;
    }

    /**
     * The lease of {@code runId} as the database holds it now ({@link RunLeases}), or null when
     * the run was never leased. PostgreSQL only (a SQLite store has none: null).
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized RunLeases.Lease lease(String runId) {
        return db.read("the lease of run " + runId, () -> db.isSqlite() ? null : RunLeases.current(db.connection(), runId));
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

    private Receipt store(Job job, JobOutcome outcome, String workerId) {
        return store(job, outcome, workerId, Map.of());
    }

    /**
     * Stores the answers in one transaction, one JDBC batch per statement; when the database
     * refuses a record of one of them for what it holds, nothing of that transaction is kept and
     * they are stored again one by one, each in its own transaction, so that only the answer at
     * fault is refused. A failure of the store ({@link StoreException}) leaves none of the batch
     * stored, or, in that one-by-one pass, those in {@code done} before it. The answers are scored
     * first, on the calling thread and outside the store's lock ({@link StoreScoring}): an answer
     * its scorer fails on is stored unscored, with the reason.
     */
    @Override
    public void recordAll(List<Answer> answers, List<Written> done) {
        if (answers.isEmpty()) {
            return;
        }
        RecordScoring scorer = scoring;
        List<OutcomeWriter.Pending> pending = new ArrayList<>(answers.size());
        for (Answer a : answers) {
            pending.add(OutcomeWriter.Pending.scored(a.job(), a.outcome(), a.workerId(), Map.of(), scorer));
        }
        storeAll(pending, scorer, done);
    }

    private synchronized void storeAll(List<OutcomeWriter.Pending> pending, RecordScoring scorer, List<Written> done) {
        List<Receipt> receipts;
        try {
            receipts = outcomes.storeAll(pending, scorer);
        } catch (RecordRejectedException e) {
            if (pending.size() == 1) {
                done.add(new Written(null, e));
                return;
            }
            for (OutcomeWriter.Pending p : pending) {
                try {
                    Receipt receipt = outcomes.storeAll(List.of(p), scorer).get(0);
                    duplicates += receipt.duplicates();
                    told(p, scorer, receipt);
                    done.add(new Written(receipt, null));
                } catch (RecordRejectedException alone) {
                    done.add(new Written(null, alone));
                }
            }
            return;
        }
        for (int i = 0; i < receipts.size(); i++) {
            Receipt receipt = receipts.get(i);
            duplicates += receipt.duplicates();
            told(pending.get(i), scorer, receipt);
            done.add(new Written(receipt, null));
        }
    }

    /** Tells the {@link #onStored} listener of a committed outcome; what it throws is only logged. */
    private void told(OutcomeWriter.Pending p, RecordScoring scorer, Receipt receipt) {
        StoredAnswers listener = storedAnswers;
        if (listener == null) {
            return;
        }
        try {
            // The scores the writer stored: none without a job or a scoring (OutcomeWriter.storeAll).
            boolean scored = p.job() != null && scorer != RecordScoring.NONE;
            listener.stored(p.job(), p.rows(), p.vignettes(), scored ? p.scores() : null, p.cachedFrom(), receipt);
        } catch (RuntimeException e) {
            log.warn("a listener to stored answers failed on job {} (the answers are stored)", p.outcome().jobId(), e);
        }
    }

    /** Stores an outcome, marking the records of the vignettes {@code cachedFrom} names as served from the cache. */
    synchronized Receipt store(Job job, JobOutcome outcome, String workerId, Map<String, String> cachedFrom) {
        RecordScoring scorer = scoring;
        OutcomeWriter.Pending p = OutcomeWriter.Pending.scored(job, outcome, workerId, cachedFrom, scorer);
        Receipt receipt = outcomes.storeAll(List.of(p), scorer).get(0);
        duplicates += receipt.duplicates();
        told(p, scorer, receipt);
        return receipt;
    }

    /** A read in one transaction under the store's lock, for the store's helpers. */
    synchronized <T> T read(String what, ReadWork<T> work) {
        return db.read(what, () -> work.read(db.connection()));
    }

    /** A read of the connection, for {@link #read}. */
    @FunctionalInterface
    interface ReadWork<T> {
        T read(Connection c) throws SQLException;
    }

    /**
     * Keys the answers stored since the last keying, so that the cache finds them (SQLite; nothing
     * on PostgreSQL, whose index is current), in a transaction of its own.
     *
     * @throws StoreException when the store cannot write
     */
    synchronized void keyAnswers() {
        if (db.isSqlite()) {
            db.write("key the stored answers by request", () -> db.requestKeys().catchUp(db.connection()));
        }
    }

    /**
     * {@link #keyAnswers} after a sitting ended, its end already committed: a failure is logged, not
     * thrown (the caller would read it as the end not noted), and the cache's next lookup keys them.
     */
    private void keyAnswersAfterSitting(String runId) {
        try {
            keyAnswers();
        } catch (StoreException e) {
            log.warn("the answers of run {} are not yet keyed for the response cache (the next lookup keys them): {}",
                    runId, e.getMessage());
        }
    }

    /** How the cache finds records by request key on this database; used under the store's lock. */
    RequestKeyIndex requestKeys() {
        return db.requestKeys();
    }

    /** The response cache's view of this store: looking answers up by request key, storing them as cached. */
    public AnswerCache answerCache() {
        return new AnswerCache(this);
    }

    /**
     * Stores the grade of an answer that waited for one (a model-graded score) in the latest
     * scoring of its run, as {@link #recordGrade(JobId, String, int, ScoreEntry)} does.
     *
     * @return true when the grade was stored; false when the answer is missing, its run has no
     *         scoring, or it is already graded
     * @throws StoreException when the store cannot write
     */
    public synchronized boolean recordGrade(JobId jobId, String vignetteId, ScoreEntry grade) {
        int latest = db.read("the scoring of " + jobId + "/" + vignetteId,
                () -> ScoreTables.latestOfRecord(db.connection(), jobId, vignetteId));
        return latest > 0 && recordGrade(jobId, vignetteId, latest, grade);
    }

    /**
     * Stores the grade of an answer that waits for one (a model-graded score) in scoring
     * {@code scoring} of its run, unless it has one already there, or a reason for having none:
     * the first verdict stands, as the first record does.
     *
     * @return true when the grade was stored; false when the answer is missing from that scoring
     *         or already graded in it
     * @throws StoreException when the store cannot write
     */
    public synchronized boolean recordGrade(JobId jobId, String vignetteId, int scoring, ScoreEntry grade) {
        String key = jobId.value() + '\u0000' + vignetteId + '\u0000' + scoring;
        boolean[] stored = {false};
        boolean committed = db.write("store the grade of " + jobId + "/" + vignetteId, () -> {
            stored[0] = ScoreTables.grade(db.connection(), jobId, vignetteId, scoring, grade)
                    // This very grade, committed after all by a write whose commit failed midway.
                    || gradesInDoubt.contains(key)
                    && grade.equals(ScoreTables.score(db.connection(), jobId, vignetteId, scoring));
        }, () -> gradesInDoubt.add(key));
        if (committed) {
            gradesInDoubt.remove(key);
        }
        return stored[0];
    }

    /**
     * Scores every stored answer of a run again into a new scoring made by {@code rescore}, as
     * {@link #newScoring} does; earlier scorings are kept as they are.
     *
     * @throws StoreException when the store cannot read or write
     */
    public synchronized Scoring rescore(String runId, String scorer, Function<StoredRecord, ScoreEntry> scoreOf) {
        return newScoring(runId, scorer, Scoring.RESCORE, scoreOf);
    }

    /**
     * Adds the next scoring of a run and scores every stored answer of it there with what
     * {@code scoreOf} gives (null: unscored; an entry with a null score and no explanation waits
     * for a judge's grade, see {@link #recordGrade(JobId, String, int, ScoreEntry)}), all in one
     * transaction. A failed answer is not given to {@code scoreOf} (see {@link FailedAnswers}).
     * Earlier scorings are never changed; answers this store stores from now on are scored into
     * the new one. Nothing is sent to any model.
     *
     * @param scorer the scoring's scorer spec
     * @param origin {@link Scoring#RUN} or {@link Scoring#RESCORE}
     * @return the scoring made
     * @throws StoreException when the store cannot read or write
     */
    public synchronized Scoring newScoring(String runId, String scorer, String origin,
                                           Function<StoredRecord, ScoreEntry> scoreOf) {
        java.util.Objects.requireNonNull(runId, "runId");
        List<StoredRecord> records = new ArrayList<>();
        forEachRecord(runId, records::add);
        Scoring[] made = {null};
        db.write("add a scoring of run " + runId, () -> {
            made[0] = ScoreTables.create(db.connection(), runId, scorer, origin, clock.instant());
            ScoreTables.insertAll(db.connection(), made[0].number(), records, r -> FailedAnswers.score(r.record(), scorer,
                    r.context().expected(), () -> StoreScoring.guarded(scorer, () -> "job " + r.jobId() + ", vignette "
                            + r.record().vignetteId(), () -> scoreOf.apply(r))));
        });
        outcomes.scoringMade(runId, made[0].number());
        return made[0];
    }

    /**
     * The scorings of a run, oldest (number 1) first; empty when it has none.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized List<Scoring> scorings(String runId) {
        return db.read("the scorings of run " + runId, () -> ScoreTables.scorings(db.connection(), runId));
    }

    /**
     * The latest scoring of a run, or null when it has none.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized Scoring latestScoring(String runId) {
        List<Scoring> all = scorings(runId);
        return all.isEmpty() ? null : all.get(all.size() - 1);
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
        db.write("record the failure of job " + jobId,
                () -> OutcomeRows.upsertFailure(db.connection(), jobId, reason, attempts, clock.millis(), runId, model));
    }

    @Override
    public synchronized Set<String> storedVignetteIds(JobId jobId) {
        return db.read("the records of job " + jobId, () -> OutcomeRows.storedVignetteIds(db.connection(), jobId));
    }

    /**
     * Answers a whole run in one query: a job is complete when it has as many records as
     * vignettes (records are unique per vignette, so the count is enough).
     */
    @Override
    public synchronized Set<JobId> completedAmong(Collection<Job> jobs) {
        Map<String, Integer> counts = db.read("record counts", () -> OutcomeRows.countsByJob(db.connection()));
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
        return db.read("the record count", () -> RecordRows.count(db.connection(), null));
    }

    /**
     * The number of records stored for a run.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized long recordCount(String runId) {
        return db.read("the record count of run " + runId, () -> RecordRows.count(db.connection(), runId));
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
     * with its context and its score in the latest scoring of its run.
     *
     * @throws StoreException when the store cannot read
     */
    public void forEachRecord(String runId, Consumer<StoredRecord> action) {
        forEachRecord(runId, 0, action);
    }

    /**
     * Every stored record of a run ({@code runId}; every run when null), in the order of storing,
     * with its context and its score in scoring {@code scoring} of its run (0: the latest). A
     * record without a score there (or whose run has no such scoring) comes unscored.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized void forEachRecord(String runId, int scoring, Consumer<StoredRecord> action) {
        db.read("the records", () -> {
            RecordRows.forEach(db.connection(), runId, scoring, action);
            return null;
        });
    }

    /**
     * As {@link #forEachRecord(String, int, Consumer)}, without the texts: each record's response
     * reads as empty and its prompt, expected answer and score explanation as null, except that an
     * answer asked by log-likelihood (a response beginning {@code {"resps":}, short) keeps its
     * response and expected answer and a failed answer its expected answer, which the
     * multiple-choice figures are recomputed from. For figures (counts, scores, tokens,
     * latencies, metadata), which then read none of the bulk of a row. Records are read from a
     * forward-only cursor a few hundred at a time and given to {@code action} one by one: the
     * caller decides what it keeps. {@code action} runs on the calling thread, inside the store's
     * lock, and must not call the store.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized void forEachRecordWithoutTexts(String runId, int scoring, Consumer<StoredRecord> action) {
        db.read("the records", () -> {
            RecordRows.forEach(db.connection(), runId, scoring, false, action);
            return null;
        });
    }

    /**
     * Notes that a run started (or started again): what it asks, for the report and the export.
     * A run started again replaces its entry but keeps its first start (and is not finished until
     * {@link #finishRun}); each start opens a sitting ({@link RunSitting}) at {@code run.startedAt()}.
     *
     * @throws StoreException when the store cannot write
     */
    public synchronized void recordRun(RunEntry run) {
        db.write("note run " + run.runId(), () -> RunTables.upsertRun(db.connection(), run));
    }

    /**
     * Notes that a run ended with its summary, now.
     *
     * @throws StoreException when the store cannot write
     */
    public void finishRun(String runId) {
        finishRun(runId, List.of());
    }

    /**
     * Notes that a run ended with its summary, now, and keeps with the sitting that ends what its
     * model calls spent on answers never stored ({@code unstored}, one entry per model), in the
     * same transaction: as {@link #endSitting(String, List)}. On SQLite it then keys the answers
     * stored since the last keying for the response cache ({@link RequestKeyIndex}), in a
     * transaction of its own; a failure there is logged, not thrown (the cache's next lookup keys them).
     *
     * @throws StoreException when the store cannot write (nothing was noted)
     */
    public synchronized void finishRun(String runId, List<UnstoredSpend> unstored) {
        java.util.Objects.requireNonNull(unstored, "unstored");
        Instant now = clock.instant();
        db.write("note the end of run " + runId, () -> {
            RunTables.endSitting(db.connection(), runId, now, unstored);
            RunTables.finishRun(db.connection(), runId, now);
        });
        keyAnswersAfterSitting(runId);
    }

    /**
     * Notes that the run's current sitting ended now without finishing the run (interrupted, or
     * stopped): its end and the answers stored during it. Nothing when no sitting is open.
     *
     * @throws StoreException when the store cannot write
     */
    public void endSitting(String runId) {
        endSitting(runId, List.of());
    }

    /**
     * As {@link #endSitting(String)}, keeping with the sitting, in the same transaction, what its
     * model calls spent on answers never stored ({@code unstored}, one entry per model; see
     * {@link UnstoredSpend}). A model's figures replace what was kept for it in this sitting
     * (the coordinator's figures grow over the sitting: noting them again does not count them
     * twice); a sitting that was ended already still gets them; entries of nothing are not kept.
     * {@link #unstoredSpend} adds them up over the run's sittings. On SQLite it then keys the
     * answers for the response cache, as {@link #finishRun(String, List)} does.
     *
     * @throws StoreException when the store cannot write (nothing was noted)
     */
    public synchronized void endSitting(String runId, List<UnstoredSpend> unstored) {
        java.util.Objects.requireNonNull(unstored, "unstored");
        Instant now = clock.instant();
        db.write("note the end of a sitting of run " + runId,
                () -> RunTables.endSitting(db.connection(), runId, now, unstored));
        keyAnswersAfterSitting(runId);
    }

    /**
     * What every sitting of the run spent on answers never stored, added up per model (by model
     * name); empty when nothing was, or for a run the store does not hold.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized List<UnstoredSpend> unstoredSpend(String runId) {
        return db.read("the unstored spend of run " + runId, () -> RunTables.unstored(db.connection(), runId));
    }

    /**
     * Notes what stopped the run's last sitting (its budget, or a gate), so that a later report
     * says so; a later sitting that ends cleanly notes nothing, and the run's state is that of its
     * last sitting. Does nothing for a run without sittings.
     *
     * @throws StoreException when the store cannot write
     */
    public synchronized void stopRun(String runId, RunStop stop) {
        java.util.Objects.requireNonNull(stop, "stop");
        db.write("note what stopped run " + runId, () -> RunTables.stopSitting(db.connection(), runId, stop));
    }

    /** The runs noted by {@link #recordRun}, most recently started first. @throws StoreException */
    public synchronized List<RunEntry> runs() {
        return db.read("the runs", () -> RunTables.runs(db.connection()));
    }

    /**
     * Removes a run and everything stored for it (answers, scores in every scoring, scorings,
     * failed jobs, worker events, its sittings with what stopped them and what they spent on
     * answers never stored, its entry and manifest) in one transaction: after a failure
     * nothing is removed. Other runs are not touched. Idempotent: a run that is not there (any
     * more) removes nothing. The caller keeps a coordinator off the run meanwhile (a record
     * stored into a run while it is deleted would survive it); this store forgets what it knew of
     * the run's scorings, so that it may store the run afresh.
     *
     * @return what was removed; {@link RunDeletion#nothing()} when the store held nothing of it
     * @throws StoreException when the store cannot write (nothing was removed)
     */
    public synchronized RunDeletion deleteRun(String runId) {
        java.util.Objects.requireNonNull(runId, "runId");
        RunDeletion[] removed = {null};
        db.write("delete run " + runId, () -> removed[0] = RunDeletion.delete(db.connection(), db.requestKeys(), runId));
        outcomes.runDeleted(runId);
        return removed[0];
    }

    /**
     * Removes the run's failed answers and their scores, in one transaction, so that a resume asks
     * their vignettes again and stores the new answers in their place ({@link FailedAnswerReset}).
     * Answers that are not failed, and every other run, are left as they are.
     *
     * @return what was removed; no answers when the run had no failed one
     * @throws StoreException when the store cannot write (nothing was removed)
     */
    public synchronized FailedAnswerReset resetFailedAnswers(String runId) {
        java.util.Objects.requireNonNull(runId, "runId");
        FailedAnswerReset[] removed = {null};
        db.write("reset the failed answers of run " + runId,
                () -> removed[0] = FailedAnswerReset.reset(db.connection(), db.requestKeys(), runId));
        return removed[0];
    }

    /**
     * Adds a worker's failures and quarantines during (this part of) a run to what the store
     * holds for it.
     *
     * @throws StoreException when the store cannot write
     */
    public synchronized void addWorkerEvents(String runId, String workerId, long failures, long quarantines) {
        db.write("store the events of worker " + workerId,
                () -> RunTables.addWorkerEvents(db.connection(), runId, workerId, failures, quarantines));
    }

    /**
     * Each worker's failures and quarantines in a run, by worker id.
     *
     * @throws StoreException when the store cannot read
     */
    public synchronized List<WorkerEventCount> workerEvents(String runId) {
        return db.read("worker events", () -> RunTables.workerEvents(db.connection(), runId));
    }

    @Override
    public synchronized void forEachFailure(Consumer<JobFailure> action) {
        db.read("the failures", () -> {
            OutcomeRows.failures(db.connection(), action);
            return null;
        });
    }

    @Override
    public String toString() {
        return "JdbcResultStore[" + db.description() + "]";
    }

    @Override
    public synchronized void close() {
        db.close();
    }
}
