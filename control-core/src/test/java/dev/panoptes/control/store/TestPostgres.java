package dev.panoptes.control.store;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server for tests, never a mock: the one named by {@value #ENV} (what
 * {@code .ci/postgres start} prints, {@code --db postgresql://USER@HOST:PORT/DB --db-password-file
 * FILE}, which {@code .ci/test} starts; or a JDBC URL with {@code user} and {@code password}
 * parameters), else a throwaway cluster that this JVM starts with the same script and
 * stops when it exits. Each test takes a database of its own ({@link #freshDatabase()}), so tests
 * and modules never see each other's rows.
 *
 * <p>When neither can be had the test fails, saying why: it never skips silently.
 *
 * <p>Thread-safe.
 */
public final class TestPostgres {
    /** The environment variable that names a running server. */
    public static final String ENV = "PANOPTES_TEST_POSTGRES";

    private static final Pattern URL = Pattern.compile("jdbc:postgresql://([^/]+)/([^?]+)(?:\\?(.*))?");
    /** {@code --db postgresql://USER@HOST:PORT/DB --db-password-file FILE}, as {@code .ci/postgres} prints it. */
    private static final Pattern OPTIONS = Pattern.compile(
            "--db postgresql://([^@/]+)@([^/]+)/(\\S+) --db-password-file (.+)");
    private static final AtomicInteger DATABASES = new AtomicInteger();
    /** Guarded by the class. */
    private static Server server;
    /** Guarded by the class; see {@link #createOptions}. */
    private static String createOptions;

    private TestPostgres() {
    }

    /**
     * A database of one test's own on the server.
     *
     * @param url      {@code jdbc:postgresql://host:port/name}, without credentials
     * @param user     the superuser the cluster was made with
     * @param password its password
     * @param name     the database's name
     */
    public record Database(String url, String user, String password, String name) {
        /** A store on this database. */
        public JdbcResultStore open() {
            return JdbcResultStore.openPostgres(url, user, password);
        }

        /** A plain connection (auto-commit), for setting up what a test needs. */
        public Connection connect() throws SQLException {
            Properties p = new Properties();
            p.setProperty("user", user);
            p.setProperty("password", password);
            return DriverManager.getConnection(url, p);
        }

        /** Runs each statement, auto-committed. */
        public void execute(String... statements) throws SQLException {
            try (Connection c = connect(); Statement s = c.createStatement()) {
                for (String sql : statements) {
                    s.execute(sql);
                }
            }
        }

        /**
         * Terminates the server backends of every store on this database ({@code pg_terminate_backend}
         * on the connections named {@code panoptes}), as an administrator or a server restart would,
         * and waits until they are gone.
         *
         * @return how many were terminated
         */
        public int terminateStores() throws SQLException {
            String mine = "datname = '" + name + "' AND application_name = 'panoptes' AND pid <> pg_backend_pid()";
            int terminated = 0;
            try (Connection c = connect(); Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE " + mine)) {
                    while (rs.next()) {
                        terminated += rs.getBoolean(1) ? 1 : 0;
                    }
                }
                // pg_terminate_backend only signals: the backend leaves a moment later.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (true) {
                    try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE " + mine)) {
                        rs.next();
                        if (rs.getInt(1) == 0) {
                            return terminated;
                        }
                    }
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("the backends of " + name + " were still there 10 s after"
                                + " pg_terminate_backend");
                    }
                    Thread.onSpinWait();
                }
            }
        }

        @Override
        public String toString() {
            return "Database[" + url + " as " + user + "]";
        }
    }

    /** A new, empty database. @throws IllegalStateException when no server can be had (the test fails) */
    public static Database freshDatabase() {
        Server s = server();
        String name = "panoptes_test_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        try (Connection c = s.admin(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name + createOptions(c));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + " on the test PostgreSQL at "
                    + s.hostPort + ": " + e.getMessage(), e);
        }
        return new Database("jdbc:postgresql://" + s.hostPort + "/" + name, s.user, s.password, name);
    }

    /**
     * How {@link #freshDatabase()} has the server copy its template: {@code STRATEGY FILE_COPY} from
     * PostgreSQL 15 on, whose default ({@code WAL_LOG}) writes the whole template database (some
     * 7.5 MB) through the write-ahead log for each of the suite's sixty-odd databases; a file copy
     * took 0.09 s a database against 0.2 s on the test cluster (fsync off, 2 cores). Older servers
     * only copy files, and do not know the clause.
     */
    private static synchronized String createOptions(Connection admin) throws SQLException {
        if (createOptions == null) {
            try (Statement st = admin.createStatement();
                 ResultSet rs = st.executeQuery("SHOW server_version_num")) {
                rs.next();
                createOptions = Integer.parseInt(rs.getString(1)) >= 150000 ? " STRATEGY FILE_COPY" : "";
            }
        }
        return createOptions;
    }

    private static synchronized Server server() {
        if (server == null) {
            String url = System.getenv(ENV);
            server = url != null && !url.isBlank() ? Server.parse(url.strip(), ENV) : Server.start();
        }
        return server;
    }

    private record Server(String hostPort, String user, String password) {
        /** Never prints the password. */
        @Override
        public String toString() {
            return "Server[" + hostPort + " as " + user + "]";
        }

        Connection admin() throws SQLException {
            Properties p = new Properties();
            p.setProperty("user", user);
            p.setProperty("password", password);
            return DriverManager.getConnection("jdbc:postgresql://" + hostPort + "/postgres", p);
        }

        static Server parse(String url, String source) {
            Matcher options = OPTIONS.matcher(url);
            if (options.matches()) {
                // What .ci/postgres prints: worker.jar's options, the password in a file.
                Path file = Path.of(options.group(4));
                try {
                    String password = Files.readAllLines(file, StandardCharsets.UTF_8).get(0).strip();
                    return new Server(options.group(2), options.group(1), password);
                } catch (IOException | IndexOutOfBoundsException e) {
                    throw new IllegalStateException(source + " names the password file " + file
                            + ", which cannot be read: " + e.getMessage(), e);
                }
            }
            Matcher m = URL.matcher(url);
            if (!m.matches()) {
                throw new IllegalStateException(source + " is neither '--db postgresql://USER@HOST:PORT/DB"
                        + " --db-password-file FILE' nor jdbc:postgresql://HOST:PORT/DB?user=U&password=P: "
                        + JdbcResultStore.redactUrl(url));
            }
            String user = null;
            String password = null;
            for (String param : m.group(3) == null ? new String[0] : m.group(3).split("&")) {
                if (param.startsWith("user=")) {
                    user = param.substring("user=".length());
                } else if (param.startsWith("password=")) {
                    password = param.substring("password=".length());
                }
            }
            if (user == null || password == null) {
                throw new IllegalStateException(source + " must carry user= and password= parameters: "
                        + JdbcResultStore.redactUrl(url));
            }
            return new Server(m.group(1), user, password);
        }

        /**
         * Starts a throwaway cluster with {@code .ci/postgres}, stopped and deleted when the JVM exits: by
         * the shutdown hook, or, when the JVM is killed (PIT kills a minion that times out), by the
         * script's watch on this JVM's pid.
         */
        static Server start() {
            Path script = findScript();
            Path dir = Path.of(System.getProperty("java.io.tmpdir"),
                    "panoptes-pg-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
            String url = runScript(script, "start", dir, String.valueOf(ProcessHandle.current().pid()));
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                runScript(script, "stop", dir);
                deleteTree(dir);
            }, "test-postgres-stop"));
            return parse(url.strip(), script.toString());
        }

        private static Path findScript() {
            for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
                Path candidate = d.resolve(".ci/postgres");
                if (Files.isRegularFile(candidate)) {
                    return candidate;
                }
            }
            throw new IllegalStateException("no PostgreSQL for the tests: " + ENV + " is not set and no .ci/postgres"
                    + " was found above " + Path.of("").toAbsolutePath() + "; set " + ENV
                    + " to jdbc:postgresql://HOST:PORT/postgres?user=U&password=P (a superuser) or run from the"
                    + " Panoptes work tree");
        }

        private static String runScript(Path script, String command, Path dir, String... more) {
            try {
                Path output = Files.createTempFile("panoptes-pg", ".out");
                Path errors = Files.createTempFile("panoptes-pg", ".err");
                try {
                    List<String> args = new ArrayList<>(List.of("bash", script.toString(), command, dir.toString()));
                    args.addAll(List.of(more));
                    Process p = new ProcessBuilder(args).redirectOutput(output.toFile()).redirectError(errors.toFile()).start();
                    if (!p.waitFor(60, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                        throw new IllegalStateException(script + " " + command + " " + dir
                                + " did not finish in 60 s");
                    }
                    if (p.exitValue() != 0) {
                        throw new IllegalStateException("no PostgreSQL for the tests: " + ENV + " is not set and "
                                + script + " " + command + " failed (exit " + p.exitValue() + "): "
                                + Files.readString(errors, StandardCharsets.UTF_8).strip());
                    }
                    return Files.readString(output, StandardCharsets.UTF_8);
                } finally {
                    Files.deleteIfExists(output);
                    Files.deleteIfExists(errors);
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while running " + script, e);
            }
        }

        private static void deleteTree(Path dir) {
            if (!Files.exists(dir)) {
                return;
            }
            try (Stream<Path> paths = Files.walk(dir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                System.err.println("cannot delete the test PostgreSQL cluster " + dir + ": " + e.getMessage());
            }
        }
    }
}
