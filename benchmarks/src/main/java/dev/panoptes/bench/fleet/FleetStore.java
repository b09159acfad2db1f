package dev.panoptes.bench.fleet;

import org.sqlite.SQLiteConfig;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The result database of one {@code fleet} run, seen from outside the coordinator: a fresh SQLite
 * file, or a fresh database on a PostgreSQL server (created before the run, dropped after), the
 * {@code --db} options that give it to the coordinator, a cheap count of the records stored so far
 * to poll while it runs (SQLite: {@code MAX(rowid)}, which an index answers; PostgreSQL: the
 * statistics collector's inserted rows, flushed about once a second), the exact count at the end,
 * and for PostgreSQL the server's own CPU (its processes, from /proc).
 *
 * <p>Used by the parent's main thread only.
 */
abstract class FleetStore implements AutoCloseable {
    /** The coordinator's {@code --db ...} arguments. */
    abstract List<String> dbArgs();

    /** Records stored so far, cheaply and approximately (lagging by at most a second); 0 before the table exists. */
    abstract long storedSoFar();

    /** The exact count of stored records, once the run has ended. */
    abstract long exactCount() throws SQLException;

    /** CPU so far of each process of the database server by pid, or an empty map for SQLite (in-process). */
    abstract Map<Long, Long> serverCpuNanos();

    @Override
    public abstract void close();

    /** What the report calls it. */
    abstract String describe();

    /** A fresh SQLite file in {@code dir}. */
    static FleetStore sqlite(Path dir) {
        return new Sqlite(dir.resolve("results.db"));
    }

    /**
     * A fresh database named {@code name} on the server of {@code url}
     * ({@code postgresql://USER@HOST:PORT/DB}), the password in {@code passwordFile} (or none).
     */
    static FleetStore postgres(String url, Path passwordFile, String name) throws SQLException, IOException {
        return new Postgres(url, passwordFile, name);
    }

    private static final class Sqlite extends FleetStore {
        private final Path file;
        private Connection poll;

        Sqlite(Path file) {
            this.file = file;
        }

        @Override
        List<String> dbArgs() {
            return List.of("--db", file.toString());
        }

        @Override
        long storedSoFar() {
            if (!Files.exists(file)) {
                return 0;
            }
            try {
                if (poll == null) {
                    SQLiteConfig config = new SQLiteConfig();
                    config.setReadOnly(true);
                    config.setBusyTimeout(1000);
                    poll = config.createConnection("jdbc:sqlite:" + file.toAbsolutePath());
                }
                // Rows are only inserted, never deleted, in a fresh file: the largest rowid is the count, read from the b-tree's edge.
                try (Statement s = poll.createStatement();
                     ResultSet rs = s.executeQuery("SELECT MAX(rowid) FROM panoptes_records")) {
                    return rs.next() ? rs.getLong(1) : 0;
                }
            } catch (SQLException e) {
                return 0; // not created yet, or busy for a moment: the next poll sees it
            }
        }

        @Override
        long exactCount() throws SQLException {
            storedSoFar();
            try (Statement s = poll.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM panoptes_records")) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }

        @Override
        Map<Long, Long> serverCpuNanos() {
            return Map.of();
        }

        @Override
        String describe() {
            return "SQLite (a fresh temporary file per run)";
        }

        @Override
        public void close() {
            try {
                if (poll != null) {
                    poll.close();
                }
            } catch (SQLException e) {
                // Closing a read-only connection; nothing to keep.
            }
        }
    }

    private static final class Postgres extends FleetStore {
        private final String userInfo;
        private final String hostPort;
        private final String name;
        private final Path passwordFile;
        private final Properties props = new Properties();
        private final Connection admin;
        private final Connection poll;

        Postgres(String url, Path passwordFile, String name) throws SQLException, IOException {
            URI uri = URI.create(url);
            if (!"postgresql".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new IllegalArgumentException("--db " + url + " is not a postgresql://USER@HOST:PORT/DB URL");
            }
            this.userInfo = uri.getUserInfo();
            this.hostPort = uri.getHost() + (uri.getPort() > 0 ? ":" + uri.getPort() : "");
            this.name = name;
            this.passwordFile = passwordFile;
            if (userInfo != null) {
                props.setProperty("user", userInfo);
            }
            if (passwordFile != null) {
                props.setProperty("password", Files.readString(passwordFile).strip());
            }
            String db = uri.getPath() == null || uri.getPath().length() <= 1 ? "postgres" : uri.getPath().substring(1);
            this.admin = DriverManager.getConnection("jdbc:postgresql://" + hostPort + "/" + db, props);
            try (Statement s = admin.createStatement()) {
                s.execute("CREATE DATABASE " + name);
            }
            this.poll = DriverManager.getConnection("jdbc:postgresql://" + hostPort + "/" + name, props);
        }

        @Override
        List<String> dbArgs() {
            List<String> args = new ArrayList<>(List.of("--db",
                    "postgresql://" + (userInfo == null ? "" : userInfo + "@") + hostPort + "/" + name));
            if (passwordFile != null) {
                args.addAll(List.of("--db-password-file", passwordFile.toString()));
            }
            return args;
        }

        @Override
        long storedSoFar() {
            try (Statement s = poll.createStatement();
                 ResultSet rs = s.executeQuery("SELECT n_tup_ins FROM pg_stat_user_tables"
                         + " WHERE relname = 'panoptes_records'")) {
                return rs.next() ? rs.getLong(1) : 0;
            } catch (SQLException e) {
                return 0;
            }
        }

        @Override
        long exactCount() throws SQLException {
            try (Statement s = poll.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM panoptes_records")) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }

        @Override
        Map<Long, Long> serverCpuNanos() {
            Map<Long, Long> cpu = new HashMap<>();
            try (Statement s = poll.createStatement();
                 ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()")) {
                while (rs.next()) {
                    long pid = rs.getLong(1);
                    long nanos = dev.panoptes.bench.harness.Machine.processCpuNanos(pid);
                    if (nanos >= 0) {
                        cpu.put(pid, nanos);
                    }
                }
            } catch (SQLException e) {
                // A poll missed; the window's ends are other polls.
            }
            return cpu;
        }

        @Override
        String describe() {
            return String.format(Locale.ROOT, "PostgreSQL at %s (a fresh database per run)", hostPort);
        }

        @Override
        public void close() {
            try {
                poll.close();
                try (Statement s = admin.createStatement()) {
                    s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
                }
                admin.close();
            } catch (SQLException e) {
                System.err.println("fleet: could not drop database " + name + ": " + e.getMessage());
            }
        }
    }

    /** CPU between two {@link #serverCpuNanos()} maps: the processes alive at both. */
    static long serverCpuBetween(Map<Long, Long> a, Map<Long, Long> b) {
        long total = 0;
        for (Map.Entry<Long, Long> e : b.entrySet()) {
            Long start = a.get(e.getKey());
            if (start != null) {
                total += e.getValue() - start;
            }
        }
        return total;
    }
}
