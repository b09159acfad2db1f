package dev.panoptes.coordinator;

import dev.panoptes.control.store.JdbcResultStore;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where results live, as {@code --db} names them: a SQLite file (one coordinator per file), or a
 * PostgreSQL database that several coordinators share (one coordinator per run). Opening the
 * store and keeping other coordinators off go through here, so that commands need not care which.
 *
 * <p>A PostgreSQL password comes from {@code --db-password-file}, {@value #PASSWORD_ENV} or
 * {@value #PG_PASSWORD_ENV}, never from the command line (which every user of the machine can
 * read), and is never printed: {@link #toString()} names the database without it.
 */
public sealed interface DatabaseTarget permits DatabaseTarget.Sqlite, DatabaseTarget.Postgres {
    /** The environment variable read first for a PostgreSQL password. */
    String PASSWORD_ENV = "PANOPTES_DB_PASSWORD";
    /** The environment variable libpq reads, read second. */
    String PG_PASSWORD_ENV = "PGPASSWORD";

    /**
     * Opens the store, creating the tables when missing.
     *
     * @throws dev.panoptes.control.store.StoreException when the database cannot be opened
     */
    JdbcResultStore open();

    /**
     * Keeps other coordinators off the whole database, taken before anything else: SQLite's file
     * lock. PostgreSQL locks nothing here.
     */
    StoreLock lockDatabase(InetSocketAddress listen) throws IOException;

    /**
     * Keeps other coordinators off one run, taken once its id is known: PostgreSQL's advisory
     * lock. SQLite locks nothing more here (the file is locked already).
     */
    StoreLock lockRun(String runId, InetSocketAddress listen) throws IOException;

    /**
     * Waits until no other coordinator holds the run, then locks it as {@link #lockRun} does: a
     * standby coordinator's wait ({@code coordinator --standby}). Only a PostgreSQL database has
     * runs that another machine's coordinator can take over.
     *
     * @param poll    how often to try
     * @param waiting told once, on this thread, who holds the run when it is found held
     * @throws IOException                   when the database cannot be reached
     * @throws InterruptedException          when the thread is interrupted while waiting
     * @throws UnsupportedOperationException for a SQLite file
     */
    default StoreLock awaitRun(String runId, InetSocketAddress listen, java.time.Duration poll,
                               java.util.function.Consumer<String> waiting) throws IOException, InterruptedException {
        throw new UnsupportedOperationException("a standby coordinator needs a PostgreSQL --db, not " + this);
    }

    /** True when nothing is there yet to read (a SQLite file that does not exist). */
    boolean missing();

    /**
     * What {@code CoordinatorSettings.db} carries: the SQLite file, or, for PostgreSQL, the
     * redacted URL as a path, for display only.
     */
    Path settingsPath();

    /**
     * Reads {@code --db}: {@code postgresql://[user@]host[:port]/dbname[?params]} (also
     * {@code postgres://} and {@code jdbc:postgresql://}) is PostgreSQL, anything else a SQLite file.
     *
     * @throws IllegalArgumentException when a PostgreSQL URL is malformed or carries a password;
     *                                  the message never repeats the value
     */
    static DatabaseTarget parse(String value) {
        Objects.requireNonNull(value, "value");
        if (Postgres.SCHEME.matcher(value).lookingAt()) {
            return Postgres.parse(value);
        }
        if (value.startsWith("jdbc:")) {
            throw new IllegalArgumentException("only a SQLite file or a PostgreSQL URL"
                    + " (postgresql://[user@]host[:port]/dbname) is supported");
        }
        try {
            return new Sqlite(Path.of(value));
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("not a file name: " + e.getMessage(), e);
        }
    }

    /**
     * The password for a PostgreSQL database: the first line of {@code file} when given, else
     * {@value #PASSWORD_ENV}, else {@value #PG_PASSWORD_ENV}; null when none is set.
     *
     * @throws IOException when the file cannot be read (the message names the file, never its content)
     */
    static String password(Path file, Map<String, String> env) throws IOException {
        if (file != null) {
            String content;
            try {
                content = Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IOException("cannot read the password file " + file + ": " + e.getClass().getSimpleName(),
                        e);
            }
            int newline = content.indexOf('\n');
            String line = (newline < 0 ? content : content.substring(0, newline)).strip();
            if (line.isEmpty()) {
                throw new IOException("the password file " + file + " is empty");
            }
            return line;
        }
        for (String name : new String[] {PASSWORD_ENV, PG_PASSWORD_ENV}) {
            String v = env.get(name);
            if (v != null && !v.isEmpty()) {
                return v;
            }
        }
        return null;
    }

    /** A SQLite file: one coordinator per file, locked by {@link DatabaseLock}. */
    record Sqlite(Path file) implements DatabaseTarget {
        public Sqlite {
            Objects.requireNonNull(file, "file");
        }

        @Override
        public JdbcResultStore open() {
            return JdbcResultStore.openSqlite(file);
        }

        @Override
        public StoreLock lockDatabase(InetSocketAddress listen) throws IOException {
            DatabaseLock lock = DatabaseLock.acquire(file, listen);
            return new StoreLock() {
                @Override
                public void listening(InetSocketAddress address) {
                    lock.listening(address);
                }

                @Override
                public void close() {
                    lock.close();
                }
            };
        }

        @Override
        public StoreLock lockRun(String runId, InetSocketAddress listen) {
            return StoreLock.NONE;
        }

        @Override
        public boolean missing() {
            return !Files.isRegularFile(file);
        }

        @Override
        public Path settingsPath() {
            return file;
        }

        @Override
        public String toString() {
            return file.toString();
        }
    }

    /**
     * A PostgreSQL database: coordinators of different runs share it, each run is locked by
     * {@link PostgresRunLock}.
     */
    public final class Postgres implements DatabaseTarget {
        static final Pattern SCHEME = Pattern.compile("(?i)(jdbc:)?postgres(ql)?:");
        private static final Pattern URL = Pattern.compile(
                "(?i)(?:jdbc:)?postgres(?:ql)?://(?:([^@/?#]*)@)?([^@/?#]+)/([^/?#]+)(?:\\?([^#]*))?");

        private final String jdbcUrl;
        private final String user;
        private final String password;

        Postgres(String jdbcUrl, String user, String password) {
            this.jdbcUrl = Objects.requireNonNull(jdbcUrl, "jdbcUrl");
            this.user = user;
            this.password = password;
        }

        static Postgres parse(String value) {
            Matcher m = URL.matcher(value);
            if (!m.matches()) {
                throw new IllegalArgumentException("not a PostgreSQL URL; expected"
                        + " postgresql://[user@]host[:port]/dbname[?params]");
            }
            String userInfo = m.group(1);
            String params = m.group(4);
            if ((userInfo != null && userInfo.contains(":"))
                    || (params != null && Pattern.compile("(?i)(^|&)password=").matcher(params).find())) {
                throw new IllegalArgumentException("a password does not belong on the command line, where every"
                        + " user of this machine can read it; put it in " + PASSWORD_ENV + " or " + PG_PASSWORD_ENV
                        + ", or in a file named by --db-password-file");
            }
            String user = userInfo == null || userInfo.isEmpty() ? null
                    : URLDecoder.decode(userInfo, StandardCharsets.UTF_8);
            return new Postgres("jdbc:postgresql://" + m.group(2) + "/" + m.group(3)
                    + (params == null || params.isEmpty() ? "" : "?" + params), user, null);
        }

        /** The same database, with this password (null for none). */
        public Postgres withPassword(String password) {
            return new Postgres(jdbcUrl, user, password);
        }

        String jdbcUrl() {
            return jdbcUrl;
        }

        String user() {
            return user;
        }

        String password() {
            return password;
        }

        @Override
        public JdbcResultStore open() {
            return JdbcResultStore.openPostgres(jdbcUrl, user, password);
        }

        @Override
        public StoreLock lockDatabase(InetSocketAddress listen) {
            return StoreLock.NONE;
        }

        @Override
        public StoreLock lockRun(String runId, InetSocketAddress listen) throws IOException {
            return PostgresRunLock.acquire(this, runId, listen);
        }

        @Override
        public StoreLock awaitRun(String runId, InetSocketAddress listen, java.time.Duration poll,
                                  java.util.function.Consumer<String> waiting) throws IOException, InterruptedException {
            return PostgresRunLock.await(this, runId, listen, poll, waiting);
        }

        @Override
        public boolean missing() {
            return false;
        }

        @Override
        public Path settingsPath() {
            try {
                return Path.of(toString());
            } catch (InvalidPathException e) {
                return Path.of("postgresql");
            }
        }

        /** {@code postgresql://host:5432/evals (user ci)}: never the password. */
        @Override
        public String toString() {
            return jdbcUrl.substring("jdbc:".length()).replaceAll("(?i)(password=)[^&;]*", "$1***")
                    + (user == null ? "" : " (user " + user + ")");
        }
    }
}
