package dev.panoptes.eval.sandbox;

import dev.panoptes.control.FailureScope;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a sample's commands meet in a {@link Sandbox}: a work folder that lasts between commands
 * and is seeded with files, output kept up to a limit and cut for the model with a mark, a time
 * limit per command; and a worker that cannot build a sandbox says why and runs nothing.
 */
class SandboxTest {
    private static Sandboxes sandboxes;

    @BeforeAll
    static void start() throws InterruptedException {
        SandboxLimits limits = new SandboxLimits(Duration.ofSeconds(10), 512L << 20, 32, 16L << 20, 8L << 20,
                1L << 20, 16 * 1024);
        sandboxes = Sandboxes.onPath(System.getenv("PATH"), limits, 4);
        String problem = sandboxes.check();
        assertThat(problem).as("this machine must run sandboxes (bubblewrap is a prerequisite)").isNull();
    }

    @AfterAll
    static void stop() {
        sandboxes.close();
    }

    @Test
    void theWorkFolderLastsBetweenCommandsAndIsSeededWithFiles() throws InterruptedException {
        try (Sandbox s = sandboxes.open()) {
            assertThat(s.writeFile("src/main.py", "print(6 * 7)\n".getBytes(StandardCharsets.UTF_8)).succeeded())
                    .isTrue();
            assertThat(s.writeFile("it's odd.txt", new byte[]{0, 1, 2, (byte) 255}).succeeded()).isTrue();
            CommandResult run = s.run("python3 src/main.py && pwd && echo $HOME && wc -c < \"it's odd.txt\"");
            assertThat(run.succeeded()).as(run.toString()).isTrue();
            assertThat(run.output()).isEqualTo("42\n/work\n/work\n4\n");
            s.run("echo kept > note.txt; cd /tmp");
            assertThat(s.run("cat note.txt; pwd").output()).isEqualTo("kept\n/work\n");
        }
    }

    @Test
    void aFileLongerThanOneLineOfBase64IsWrittenWhole() throws InterruptedException {
        // Files past 57 bytes take more than one line of base64 on their way in.
        byte[] content = ("INFO start\nERROR disk\nINFO ok\nERROR net\n".repeat(200))
                .getBytes(StandardCharsets.UTF_8);
        try (Sandbox s = sandboxes.open()) {
            CommandResult write = s.writeFile("logs/app.log", content);
            assertThat(write.succeeded()).as(write.toString()).isTrue();
            assertThat(s.run("wc -c < logs/app.log; grep -c ERROR logs/app.log").output())
                    .isEqualTo(content.length + "\n400\n");
        }
    }

    @Test
    void aFreshSandboxSeesNothingOfTheOneBefore() throws InterruptedException {
        try (Sandbox s = sandboxes.open()) {
            s.run("echo secret > /work/left.txt; echo secret > /tmp/left.txt");
        }
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("ls -A /work /tmp");
            assertThat(r.output()).doesNotContain("left.txt");
        }
    }

    @Test
    void exitStatusAndStderrAreReported() throws InterruptedException {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("echo out; echo err >&2; exit 3");
            assertThat(r.exitStatus()).isEqualTo(3);
            assertThat(r.succeeded()).isFalse();
            assertThat(r.output()).isEqualTo("out\nerr\n");
            assertThat(r.timedOut()).isFalse();
            assertThat(s.run("cat <<'X'\nstdin is empty: $(cat)\nX").output()).isEqualTo("stdin is empty: $(cat)\n");
            assertThat(s.run("echo \"[$(cat)]\"").output()).isEqualTo("[]\n");
        }
    }

    @Test
    void outputPastWhatIsKeptIsCutAndTheModelSeesAMarkedPart() throws InterruptedException {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("head -c 5000000 /dev/zero | tr '\\0' a; echo; echo end");
            assertThat(r.outputCut()).isTrue();
            assertThat(r.output()).hasSize((int) s.limits().keptOutputBytes());
            String shown = r.outputForModel(s.limits().modelOutputBytes());
            assertThat(shown.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(16 * 1024 + 100);
            assertThat(shown).contains("bytes of output cut here").endsWith("the command wrote more than the sandbox keeps]");

            CommandResult endless = s.run("yes");
            assertThat(endless.outputCut()).isTrue();
            assertThat(endless.timedOut()).as("yes stops at a full output folder, not at the time limit").isFalse();
            assertThat(s.run("echo next").output()).isEqualTo("next\n");
        }
    }

    @Test
    void theModelsViewKeepsHeadAndTailAndWholeCharacters() {
        String text = "é".repeat(20_000) + "END";
        CommandResult r = new CommandResult(0, text, false, false, Duration.ZERO, null);
        String shown = r.outputForModel(1000);
        assertThat(shown.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(1000);
        assertThat(shown).startsWith("éé").endsWith("éEND").doesNotContain("\uFFFD")
                .contains("bytes of output cut here");
        assertThat(new CommandResult(0, "short", false, false, Duration.ZERO, null).outputForModel(1000))
                .isEqualTo("short");
    }

    @Test
    void aCommandPastItsTimeIsKilledAndTheSandboxGoesOn() throws InterruptedException {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("echo before; sleep 600", Duration.ofMillis(700));
            assertThat(r.timedOut()).isTrue();
            assertThat(r.output()).isEqualTo("before\n");
            assertThat(r.duration()).isLessThan(Duration.ofSeconds(5));
            assertThat(s.run("echo after").output()).isEqualTo("after\n");
        }
    }

    @Test
    void aPathOutsideTheWorkFolderIsRefused() throws InterruptedException {
        try (Sandbox s = sandboxes.open()) {
            for (String bad : List.of("/etc/passwd", "../x", "a/../../x", "")) {
                assertThatThrownBy(() -> s.writeFile(bad, new byte[1])).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("work folder");
            }
        }
    }

    @Test
    void withoutBubblewrapTheWorkerSaysSoAndRunsNothing(@TempDir Path dir) throws InterruptedException {
        try (Sandboxes none = Sandboxes.with(dir.resolve("bwrap"), List.of(), SandboxLimits.defaults(), 1)) {
            assertThat(none.check()).contains("bubblewrap (bwrap) is not installed").contains("apt-get install bubblewrap");
            assertThatThrownBy(none::open).isInstanceOf(SandboxUnavailableException.class)
                    .satisfies(e -> assertThat(((SandboxUnavailableException) e).scope()).isEqualTo(FailureScope.WORKER));
        }
    }

    @Test
    void aBubblewrapThatCannotBuildNamespacesIsReportedWithItsOwnWords(@TempDir Path dir)
            throws InterruptedException, IOException {
        // What bwrap prints where user namespaces are disabled (kernel.unprivileged_userns_clone=0).
        Path fake = dir.resolve("bwrap");
        Files.writeString(fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
        // Readable by all: a root worker runs bubblewrap as nobody.
        Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("r-xr-xr-x"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> path = List.of(System.getenv("PATH").split(":"));
        try (Sandboxes broken = Sandboxes.with(fake, path, SandboxLimits.defaults(), 1)) {
            String problem = broken.check();
            assertThat(problem).contains("cannot start a sandbox").contains("No permissions to create new namespace");
            assertThatThrownBy(broken::open).isInstanceOf(SandboxUnavailableException.class);
            // The slot went back each time: a third attempt does not wait for one.
            assertThatThrownBy(broken::open).isInstanceOf(SandboxUnavailableException.class);
        }
    }
}
