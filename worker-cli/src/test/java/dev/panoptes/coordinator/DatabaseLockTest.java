package dev.panoptes.coordinator;

import dev.panoptes.testing.JarProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.panoptes.testing.FakeCoordinator.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link DatabaseLock}. What the OS lock does is only visible from another process, so some
 * tests start {@link LockProbe} in a second JVM.
 */
class DatabaseLockTest {
    private static final InetSocketAddress LISTEN = new InetSocketAddress("127.0.0.1", 7070);

    @TempDir
    Path dir;

    private final List<Process> probes = new ArrayList<>();

    @AfterEach
    void stopProbes() {
        probes.forEach(Process::destroyForcibly);
    }

    @Test
    void anotherProcessIsRefusedWithTheHolderNamedAndTheDatabaseIsNotCreated() throws Exception {
        Path db = dir.resolve("r.db");
        // What a holder killed with -9 left behind: overwritten, never believed.
        Files.writeString(dir.resolve("r.db.lock"), "pid=1\nhost=stale-host\nlisten=10.9.9.9:1\nsince=2020-01-01T00:00:00Z\n");
        Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);

        try (DatabaseLock lock = DatabaseLock.acquire(db, LISTEN)) {
            lock.listening(new InetSocketAddress("127.0.0.1", 41234));
            DatabaseLock.Holder me = lock.holder();

            assertThat(me.pid()).isEqualTo(ProcessHandle.current().pid());
            assertThat(me.host()).isEqualTo(InetAddress.getLocalHost().getHostName());
            assertThat(me.listen()).isEqualTo("127.0.0.1:41234");
            assertThat(me.since()).isBetween(before, Instant.now());
            assertThat(probe("acquire", db.toString())).isEqualTo("REFUSED " + db
                    + " is in use by another coordinator (pid " + me.pid() + " on " + me.host()
                    + ", listening on 127.0.0.1:41234, since " + me.since() + "); stop it, or use another --db");
            assertThat(db).doesNotExist();
            assertThat(lock.file()).isEqualTo(dir.toRealPath().resolve("r.db.lock"));
        }
    }

    @Test
    void closingReleasesTheLockAndEmptiesItsFile() throws Exception {
        Path db = dir.resolve("r.db");
        DatabaseLock lock = DatabaseLock.acquire(db, LISTEN);
        Path file = lock.file();
        assertThat(Files.size(file)).isPositive();

        lock.close();
        lock.close();

        assertThat(file).isEmptyFile();
        assertThat(probe("acquire", db.toString())).startsWith("ACQUIRED");
        try (DatabaseLock again = DatabaseLock.acquire(db, LISTEN)) {
            assertThat(again.holder().pid()).isEqualTo(ProcessHandle.current().pid());
        }
    }

    @Test
    void aSecondAcquireInTheSameJvmIsRefusedAndTheFirstKeepsItsOsLock() throws Exception {
        Path db = dir.resolve("r.db");
        Files.createDirectories(dir.resolve("sub"));
        try (DatabaseLock first = DatabaseLock.acquire(db, LISTEN)) {
            first.listening(new InetSocketAddress("127.0.0.1", 5555));

            // Another spelling of the same file, as a second coordinator might be given it.
            Path sameDb = dir.resolve("sub").resolve("..").resolve("r.db");
            assertThatThrownBy(() -> DatabaseLock.acquire(sameDb, LISTEN))
                    .isInstanceOf(DatabaseLock.InUseException.class)
                    .hasMessage(sameDb + " is in use by another coordinator (pid " + ProcessHandle.current().pid()
                            + " on " + first.holder().host() + ", listening on 127.0.0.1:5555, since "
                            + first.holder().since() + "); stop it, or use another --db");

            // With POSIX locks, a refusal that opened and closed the file would have unlocked it
            // for every other process while `first` still believed it held it.
            assertThat(probe("acquire", db.toString())).startsWith("REFUSED " + db + " is in use");
        }
        DatabaseLock.acquire(db, LISTEN).close(); // released: throws if the refusal left anything behind
    }

    @Test
    void aSymbolicLinkToTheDatabaseSharesItsLock() throws Exception {
        Path db = Files.writeString(dir.resolve("r.db"), "");
        Path link = Files.createSymbolicLink(dir.resolve("link.db"), db);

        try (DatabaseLock lock = DatabaseLock.acquire(db, LISTEN)) {
            assertThatThrownBy(() -> DatabaseLock.acquire(link, LISTEN))
                    .isInstanceOf(DatabaseLock.InUseException.class)
                    .hasMessageStartingWith(link + " is in use by another coordinator (pid ");
            assertThat(DatabaseLock.lockFileFor(link)).isEqualTo(lock.file());
        }
    }

    @Test
    void aHolderWhoseFileSaysNothingReadableIsStillRefusedInOneClearLine() throws Exception {
        Path db = dir.resolve("r.db");
        Process holder = start("hold-garbage", db.toString(), "00ff0a3d3d3d0a706964");
        assertThat(firstLine(holder)).isEqualTo("HELD");

        assertThatThrownBy(() -> DatabaseLock.acquire(db, LISTEN))
                .isInstanceOf(DatabaseLock.InUseException.class)
                .hasMessage(db + " is in use by another coordinator (which one is unknown: "
                        + dir.toRealPath().resolve("r.db.lock") + " holds nothing readable); stop it, or use another --db");

        holder.getOutputStream().close();
        assertThat(holder.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        DatabaseLock.acquire(db, LISTEN).close(); // the refusal kept nothing locked in this JVM
    }

    @Test
    void whatALockFileSaysIsReadDefensively() {
        Path db = Path.of("math.db");
        Path file = Path.of("math.db.lock");
        String full = "# comment\npid=4242\nhost=gpu-01\nlisten=127.0.0.1:7070\nsince=2026-12-01T10:31:02Z\n";

        assertThat(refusal(full)).isEqualTo("math.db is in use by another coordinator (pid 4242 on gpu-01, listening"
                + " on 127.0.0.1:7070, since 2026-12-01T10:31:02Z); stop it, or use another --db");
        // Cut short while the holder writes: the incomplete last line is not trusted.
        assertThat(refusal("pid=4242\nhost=gpu-01\nlisten=127.0.0.1:70"))
                .contains("(pid 4242 on gpu-01); stop it");
        // Values that are not what a holder writes are dropped, so the message stays one line.
        assertThat(refusal("pid=-3\nhost=evil\u001b[2Jhost\nlisten=nowhere\nsince=yesterday\n"))
                .isEqualTo("math.db is in use by another coordinator (which one is unknown: math.db.lock holds"
                        + " nothing readable); stop it, or use another --db");
        assertThat(refusal("host=gpu-01\nsince=2026-12-01T10:31:02Z\n"))
                .contains("(on gpu-01, since 2026-12-01T10:31:02Z)");
        assertThat(refusal("")).isEqualTo("math.db is in use by another coordinator (which one is unknown:"
                + " math.db.lock holds nothing readable); stop it, or use another --db");
        byte[] binary = new byte[512];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) (i * 37);
        }
        assertThat(DatabaseLock.InUseException.message(db, DatabaseLock.Holder.parse(binary), file))
                .contains("which one is unknown").doesNotContain("\n").doesNotContain("\r");
        // What a holder writes reads back the same, whatever it writes.
        DatabaseLock.Holder h = DatabaseLock.Holder.parse(full.getBytes(StandardCharsets.UTF_8));
        assertThat(DatabaseLock.Holder.parse(h.toFileContent(db).getBytes(StandardCharsets.UTF_8))).isEqualTo(h);
    }

    private static String refusal(String content) {
        return DatabaseLock.InUseException.message(Path.of("math.db"),
                DatabaseLock.Holder.parse(content.getBytes(StandardCharsets.UTF_8)), Path.of("math.db.lock"));
    }

    /** Runs a probe to its end and returns its one line of output. */
    private String probe(String... args) throws Exception {
        Process p = start(args);
        String line = firstLine(p);
        assertThat(p.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as("the probe exited").isTrue();
        assertThat(p.exitValue()).as("probe exit code").isZero();
        return line;
    }

    private Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(JarProcesses.JVM_OPTIONS);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), LockProbe.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        probes.add(p);
        return p;
    }

    /** Blocks until the probe prints a line (the class timeout bounds the wait). */
    private static String firstLine(Process p) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = reader.readLine();
        assertThat(line).as("the probe's output").isNotNull();
        return line;
    }
}
