package dev.panoptes.coordinator;

import dev.panoptes.control.store.RunEntry;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The coordinators' locks as seen from outside a run: which runs of a database a coordinator
 * holds now ({@link #running}), and holding a run against coordinators while it is deleted
 * ({@link #exclusive}), for the {@code runs} command and any tool that manages stored runs.
 *
 * <p>On PostgreSQL each run has a lock of its own ({@link PostgresRunLock}): the running runs are
 * those whose advisory key the server shows granted in {@code pg_locks}, read without taking any
 * lock. On SQLite the lock is the whole file's ({@link DatabaseLock}) and does not name a run:
 * while it is held, the run shown as running is the unfinished one started last (a coordinator
 * notes its run, as unfinished, right after locking; one just starting or resuming a finished
 * run is not seen for that moment). Finding out takes the file's lock for an instant, so a
 * coordinator starting at that very instant is refused, naming this process, and may simply be
 * started again. Deleting holds the file's lock throughout: no run of a SQLite database is
 * deleted while a coordinator uses it, since which run it writes cannot be known for sure.
 *
 * <p>Stateless; any thread. Every connection and lock it takes is released before it returns,
 * except the one {@link #exclusive} hands back.
 */
public final class RunLocks {
    private static final Logger log = LoggerFactory.getLogger(RunLocks.class);
    /** Where a lock taken here says its holder listens: no coordinator, but the lock file and the server want one. */
    private static final InetSocketAddress NOT_LISTENING = InetSocketAddress.createUnresolved("runs-command", 0);
    /** The advisory locks granted in the current database, as their 64-bit keys' two halves. */
    private static final String ADVISORY_LOCKS = "SELECT classid::bigint, objid::bigint FROM pg_locks"
            + " WHERE locktype = 'advisory' AND granted AND objsubid = 1"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

    private RunLocks() {
    }

    /** A run held against coordinators; {@link #close()} releases it and never throws. */
    public interface Hold extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * A coordinator holds the run (or, on SQLite, the database): the message is one line naming
     * the holder as far as it is known, and what to do.
     */
    public static final class InUseException extends IOException {
        private static final long serialVersionUID = 1L;

        InUseException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The ids, among {@code runs}, of those a coordinator is running now (see the class comment
     * for what that means on SQLite; a SQLite database whose lock file cannot be opened, as in
     * a read-only folder, has no coordinator).
     *
     * @throws IOException when PostgreSQL's locks cannot be read (the server unreachable, say)
     */
    public static Set<String> running(DatabaseTarget target, List<RunEntry> runs) throws IOException {
        if (target instanceof DatabaseTarget.Postgres postgres) {
            return runningOnPostgres(postgres, runs);
        }
        DatabaseTarget.Sqlite sqlite = (DatabaseTarget.Sqlite) target;
        try {
            DatabaseLock.acquire(sqlite.file(), NOT_LISTENING).close();
            return Set.of();
        } catch (DatabaseLock.InUseException e) {
            Optional<RunEntry> latest = runs.stream().filter(r -> r.finishedAt() == null)
                    .max(Comparator.comparing(RunEntry::lastStartedAt));
            return latest.map(r -> Set.of(r.runId())).orElse(Set.of());
        } catch (IOException e) {
            // No lock file can be had here (a read-only folder, say), so no coordinator holds one.
            log.debug("cannot probe the lock of {}; taking it for free", target, e);
            return Set.of();
        }
    }

    /**
     * Holds run {@code runId} against coordinators until the hold is closed: no coordinator can
     * start it (on SQLite: start on the database at all) meanwhile. Returns at once.
     *
     * @throws InUseException when a coordinator holds it now
     * @throws IOException    when the lock cannot be taken for another reason
     */
    public static Hold exclusive(DatabaseTarget target, String runId) throws IOException {
        return exclusive(target, runId, "delete the run");
    }

    /**
     * Holds run {@code runId} against coordinators as {@link #exclusive(DatabaseTarget, String)}
     * does, for an action named in the refusal.
     *
     * @param then what the user is told to do once the coordinator is gone ("rescore it")
     * @throws InUseException when a coordinator holds it now
     * @throws IOException    when the lock cannot be taken for another reason
     */
    public static Hold exclusive(DatabaseTarget target, String runId, String then) throws IOException {
        if (target instanceof DatabaseTarget.Postgres postgres) {
            try {
                StoreLock lock = PostgresRunLock.acquire(postgres, runId, NOT_LISTENING);
                return lock::close;
            } catch (PostgresRunLock.InUseException e) {
                throw new InUseException("run " + runId + " in " + target + " is being run by a coordinator"
                        + (e.holder.isEmpty() ? "" : " (" + e.holder + ")")
                        + "; stop it or let it finish, then " + then, e);
            }
        }
        DatabaseTarget.Sqlite sqlite = (DatabaseTarget.Sqlite) target;
        try {
            DatabaseLock lock = DatabaseLock.acquire(sqlite.file(), NOT_LISTENING);
            return lock::close;
        } catch (DatabaseLock.InUseException e) {
            String who = e.holder() == null ? "" : e.holder().describe();
            throw new InUseException(target + " is in use by a coordinator" + (who.isEmpty() ? "" : " (" + who + ")")
                    + ", which may be writing run " + runId + "; stop it or let it finish, then " + then, e);
        }
    }

    private static Set<String> runningOnPostgres(DatabaseTarget.Postgres target, List<RunEntry> runs)
            throws IOException {
        Map<Long, String> byKey = runs.stream().map(RunEntry::runId).distinct()
                .collect(Collectors.toMap(PostgresRunLock::key, Function.identity()));
        Set<String> running = new HashSet<>();
        if (byKey.isEmpty()) {
            return running;
        }
        Properties properties = new Properties();
        if (target.user() != null) {
            properties.setProperty("user", target.user());
        }
        if (target.password() != null) {
            properties.setProperty("password", target.password());
        }
        properties.setProperty("ApplicationName", "panoptes runs");
        try (Connection c = DriverManager.getConnection(target.jdbcUrl(), properties);
             PreparedStatement q = c.prepareStatement(ADVISORY_LOCKS);
             ResultSet rs = q.executeQuery()) {
            while (rs.next()) {
                String run = byKey.get(rs.getLong(1) << 32 | rs.getLong(2));
                if (run != null) {
                    running.add(run);
                }
            }
        } catch (SQLException e) {
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            if (target.password() != null && !target.password().isEmpty()) {
                message = message.replace(target.password(), "***");
            }
            throw new IOException("cannot read the run locks of " + target + ": " + message, e);
        }
        return running;
    }
}
