package dev.panoptes.control.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * How the response cache finds records by request key ({@code panoptes_records.request_key}), the
 * one place where SQLite and PostgreSQL differ in that.
 *
 * <p><b>PostgreSQL</b> keeps a B-tree index on the column ({@code panoptes_records_request_key}),
 * maintained by every insert: its server pays for it, not the coordinator, and several
 * coordinators may share the database. Every other method here does nothing.
 *
 * <p><b>SQLite</b> (schema version 7) keeps no such index: a request key is a SHA-256, so each
 * insert would dirty a random leaf page of it, which the WAL then writes whole, and that cost grows
 * with the table (about 30 us per stored answer at 300,000 rows, most of the store thread's time).
 * Instead the answers are <em>keyed</em> in bulk ({@link #catchUp}): the keys of every record stored
 * since the last keying go, sorted, into {@code panoptes_request_keys} (request key, job id,
 * vignette id: the record's primary key, not its rowid, which a VACUUM may renumber), in one
 * transaction. {@code panoptes_request_key_mark} holds, in its one row, how far keying got: the
 * highest rowid keyed ({@code through}) and the primary key of the record that had it (the
 * <em>marker</em>, with its time stored and request key). Records with a rowid up to {@code through} are keyed; SQLite gives each new
 * record a rowid above the highest there is, so records stored later lie above it.
 *
 * <p>The store keys when a sitting ends and before every lookup (a sitting killed with kill -9
 * never ended: the next lookup keys its answers), so an answer is findable by the cache once its
 * sitting ended or the cache looks, the only time it looks. Keying first finds the marker again
 * (by primary key, time stored and request key) and takes its rowid as {@code through}: rowids renumbered while the store was
 * closed (a user's VACUUM keeps their order) leave exactly the records above the marker unkeyed;
 * a marker removed by someone else's SQL keys every record again ({@code INSERT OR IGNORE}: slower,
 * never wrong). The store's own deletions ({@link #forget}, {@link #settle}) delete the key entries
 * of the records they delete and move the marker down to the highest remaining record keyed, so
 * that a new record reusing a deleted rowid is above it. A key entry whose record is gone or
 * changed never yields an answer: the lookup joins it to the record by primary key and request key.
 *
 * <p>Every method works in the connection's current transaction (the caller commits). Immutable;
 * used under the store's lock.
 */
abstract class RequestKeyIndex {
    /** The index PostgreSQL keeps, and SQLite kept up to schema version 6. */
    static final String INDEX = "panoptes_records_request_key";
    /** SQLite: the key entries, one per keyed record with a request key. */
    static final String KEYS = "panoptes_request_keys";
    /** SQLite: how far keying got (one row). */
    static final String MARK = "panoptes_request_key_mark";

    private RequestKeyIndex() {
    }

    /** The index of a database: SQLite's bulk keying, or PostgreSQL's index. */
    static RequestKeyIndex of(boolean sqlite) {
        return sqlite ? new Deferred() : new Indexed();
    }

    /**
     * Creates what is missing, in the schema's transaction; {@code version} is the database's
     * version before this opening (null for a new database).
     */
    abstract void prepare(Statement s, Integer version) throws SQLException;

    /**
     * Keys every record stored since the last keying (SQLite). Its first statement writes, so that
     * it takes SQLite's write lock before it reads how far keying got.
     */
    abstract void catchUp(Connection c) throws SQLException;

    /**
     * Before deleting the records of {@code runId} that {@code where} selects ({@code run_id = ?}
     * and more): deletes their key entries (SQLite). Call {@link #settle} after deleting them.
     *
     * @param where a condition on {@code panoptes_records} whose only parameter is the run id
     */
    abstract void forget(Connection c, String where, String runId) throws SQLException;

    /** After deleting records: moves the marker down to the highest record still keyed (SQLite). */
    abstract void settle(Connection c) throws SQLException;

    /**
     * The FROM clause of the cache's lookup: the records as {@code r}, with the key entries as
     * {@code k} joined on SQLite.
     */
    abstract String lookupFrom();

    /** The column the lookup matches the request keys against. */
    abstract String lookupKey();

    /** PostgreSQL: the index, maintained by the server on every insert. */
    private static final class Indexed extends RequestKeyIndex {
        @Override
        void prepare(Statement s, Integer version) throws SQLException {
            s.execute("CREATE INDEX IF NOT EXISTS " + INDEX + " ON panoptes_records (request_key)");
        }

        @Override
        void catchUp(Connection c) {
            // The index is current after every insert.
        }

        @Override
        void forget(Connection c, String where, String runId) {
            // The index forgets a record as it is deleted.
        }

        @Override
        void settle(Connection c) {
            // Nothing marks how far the index got.
        }

        @Override
        String lookupFrom() {
            return "panoptes_records r";
        }

        @Override
        String lookupKey() {
            return "r.request_key";
        }
    }

    /** SQLite: keys in bulk, see the class comment. */
    private static final class Deferred extends RequestKeyIndex {
        /** The marker's record: the same primary key, time stored and request key. */
        private static final String IS_MARKER = "r.job_id = m.job_id AND r.vignette_id = m.vignette_id "
                + "AND r.stored_at = m.stored_at AND r.request_key IS m.request_key";
        /** The marker found again; 0 (key everything) when it is gone. */
        private static final String RESOLVE = "UPDATE " + MARK + " AS m SET through = COALESCE((SELECT r.rowid FROM "
                + "panoptes_records r WHERE " + IS_MARKER + "), 0)";
        /** The highest record, which keying makes the marker. */
        private static final String LAST = "SELECT rowid, job_id, vignette_id, stored_at, request_key "
                + "FROM panoptes_records";
        /** Sorted, so that the key table's B-tree is written leaf after leaf rather than at random. */
        private static final String KEY = "INSERT OR IGNORE INTO " + KEYS + " (request_key, job_id, vignette_id) "
                + "SELECT request_key, job_id, vignette_id FROM panoptes_records WHERE rowid > ? "
                + "AND request_key IS NOT NULL ORDER BY request_key, job_id, vignette_id";
        private static final String MOVE = "UPDATE " + MARK + " SET through = ?, job_id = ?, vignette_id = ?, "
                + "stored_at = ?, request_key = ?";

        @Override
        void prepare(Statement s, Integer version) throws SQLException {
            s.execute("DROP INDEX IF EXISTS " + INDEX);
            // WITHOUT ROWID: the entry is its primary key, and a lookup by request key reads it whole.
            s.execute("CREATE TABLE IF NOT EXISTS " + KEYS + " (request_key TEXT NOT NULL, "
                    + "job_id VARCHAR(256) NOT NULL, vignette_id TEXT NOT NULL, "
                    + "PRIMARY KEY (request_key, job_id, vignette_id)) WITHOUT ROWID");
            s.execute("CREATE TABLE IF NOT EXISTS " + MARK + " (through BIGINT NOT NULL, job_id VARCHAR(256), "
                    + "vignette_id TEXT, stored_at BIGINT, request_key TEXT)");
            // A new or upgraded database starts with nothing keyed; its records are keyed below.
            s.execute("INSERT INTO " + MARK + " (through) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM " + MARK + ")");
            if (version == null || version < 7) {
                catchUp(s.getConnection());
            }
        }

        @Override
        void catchUp(Connection c) throws SQLException {
            long through = resolve(c);
            Marker last;
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery(LAST + " ORDER BY rowid DESC LIMIT 1")) {
                last = Marker.next(rs);
            }
            if (last == null || last.rowid() <= through) {
                return;
            }
            try (PreparedStatement key = c.prepareStatement(KEY)) {
                key.setLong(1, through);
                key.executeUpdate();
            }
            move(c, last);
        }

        /** Finds the marker again and returns its rowid, now {@code through}. */
        private static long resolve(Connection c) throws SQLException {
            try (Statement s = c.createStatement()) {
                s.executeUpdate(RESOLVE);
                try (ResultSet rs = s.executeQuery("SELECT through FROM " + MARK)) {
                    return rs.next() ? rs.getLong(1) : 0;
                }
            }
        }

        /** Makes {@code marker} the marker; null: nothing is keyed. */
        private static void move(Connection c, Marker marker) throws SQLException {
            try (PreparedStatement move = c.prepareStatement(MOVE)) {
                move.setLong(1, marker == null ? 0 : marker.rowid());
                move.setString(2, marker == null ? null : marker.jobId());
                move.setString(3, marker == null ? null : marker.vignetteId());
                move.setObject(4, marker == null ? null : marker.storedAt());
                move.setString(5, marker == null ? null : marker.requestKey());
                move.executeUpdate();
            }
        }

        @Override
        void forget(Connection c, String where, String runId) throws SQLException {
            // Where the marker is now, so that settle() moves it down from there.
            resolve(c);
            try (PreparedStatement delete = c.prepareStatement("DELETE FROM " + KEYS
                    + " WHERE (request_key, job_id, vignette_id) IN (SELECT request_key, job_id, vignette_id"
                    + " FROM panoptes_records WHERE request_key IS NOT NULL AND " + where + ")")) {
                delete.setString(1, runId);
                delete.executeUpdate();
            }
        }

        @Override
        void settle(Connection c) throws SQLException {
            long through;
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT m.through, EXISTS (SELECT 1 FROM panoptes_records r WHERE "
                         + IS_MARKER + ") FROM " + MARK + " m")) {
                if (!rs.next() || rs.getBoolean(2)) {
                    return;
                }
                through = rs.getLong(1);
            }
            // The marker was deleted: the highest record left at or below it was keyed, and every
            // record between them was deleted; a new record gets a rowid above that one.
            try (PreparedStatement below = c.prepareStatement(LAST + " WHERE rowid <= ? ORDER BY rowid DESC LIMIT 1")) {
                below.setLong(1, through);
                try (ResultSet rs = below.executeQuery()) {
                    move(c, Marker.next(rs));
                }
            }
        }

        @Override
        String lookupFrom() {
            // CROSS JOIN: SQLite then reads the key entries first and each record by its primary key.
            return KEYS + " k CROSS JOIN panoptes_records r ON r.job_id = k.job_id AND r.vignette_id = k.vignette_id"
                    + " AND r.request_key = k.request_key";
        }

        @Override
        String lookupKey() {
            return "k.request_key";
        }

        /** A record as the mark names it: its rowid, primary key, time stored and request key. */
        private record Marker(long rowid, String jobId, String vignetteId, long storedAt, String requestKey) {
            /** The next row of a {@link #LAST} query, or null when there is none. */
            static Marker next(ResultSet rs) throws SQLException {
                return rs.next() ? new Marker(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4),
                        rs.getString(5)) : null;
            }
        }
    }
}
