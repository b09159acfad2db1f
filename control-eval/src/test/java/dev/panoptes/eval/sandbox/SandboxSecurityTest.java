package dev.panoptes.eval.sandbox;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The security list, each as a tool call would make it: the command tries to reach the
 * network (the worker's own loopback port included), read the worker's environment, token file,
 * home or {@code /proc/<worker pid>}, write outside its work folder, fork-bomb, allocate 10 GB,
 * fill the disk, sleep forever, or leave a process behind. Each is contained, the command's result
 * says what happened, and the sandbox, the other sandboxes and this JVM go on.
 */
class SandboxSecurityTest {
    private static Sandboxes sandboxes;

    @BeforeAll
    static void start() throws InterruptedException {
        SandboxLimits limits = new SandboxLimits(Duration.ofSeconds(10), 512L << 20, 32, 16L << 20, 8L << 20,
                1L << 20, 16 * 1024);
        sandboxes = Sandboxes.onPath(System.getenv("PATH"), limits, 4);
        assertThat(sandboxes.check()).as("this machine must run sandboxes (bubblewrap is a prerequisite)").isNull();
    }

    @AfterAll
    static void stop() {
        sandboxes.close();
    }

    @Test
    void theNetworkIsUnreachableLoopbackIncluded() throws Exception {
        try (ServerSocketChannel listening = ServerSocketChannel.open();
             Sandbox s = sandboxes.open()) {
            listening.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            listening.configureBlocking(false);
            int port = ((InetSocketAddress) listening.getLocalAddress()).getPort();
            CommandResult r = s.run("(echo hi > /dev/tcp/127.0.0.1/" + port + ") 2>&1; echo loopback=$?\n"
                    + "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " + port
                    + "), timeout=2)' 2>&1 | tail -1\n"
                    + "(echo hi > /dev/tcp/1.1.1.1/53) 2>&1; echo outside=$?\n"
                    + "python3 -c 'import socket; print(socket.getaddrinfo(\"example.com\", 80))' 2>&1 | tail -1");
            assertThat(r.output()).contains("loopback=1", "outside=1", "ConnectionRefusedError")
                    .containsAnyOf("Network is unreachable", "network is unreachable")
                    .contains("gaierror");
            assertThat(listening.accept()).as("the test's listening port saw no connection").isNull();
        }
    }

    @Test
    void theWorkersEnvironmentTokenFileHomeAndProcessAreInvisible(@TempDir Path dir) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "the-coordinators-token-value");
        String home = System.getProperty("user.home");
        long pid = ProcessHandle.current().pid();
        try (Sandbox s = sandboxes.open()) {
            CommandResult env = s.run("env | sort");
            List<String> names = new ArrayList<>();
            for (String line : env.output().split("\n")) {
                names.add(line.substring(0, line.indexOf('=')));
            }
            assertThat(names).containsExactlyInAnyOrder("HOME", "LANG", "PATH", "PWD", "SHLVL", "TMPDIR", "_");
            for (Map.Entry<String, String> e : System.getenv().entrySet()) {
                if (e.getValue().length() >= 8 && !e.getValue().startsWith("/usr")) {
                    assertThat(env.output()).as("the worker's %s", e.getKey()).doesNotContain(e.getValue());
                }
            }
            CommandResult files = s.run("cat " + Sandbox.quoted(token.toString()) + "; ls -A " + Sandbox.quoted(home)
                    + "; cat /proc/" + pid + "/environ; cat /proc/" + pid + "/cmdline; ls /proc | grep -c '^[0-9]'");
            assertThat(files.output()).doesNotContain("the-coordinators-token-value")
                    .contains(token + ": No such file or directory")
                    .contains(home + "': No such file or directory")
                    .contains("/proc/" + pid + "/environ: No such file or directory");
            String[] lines = files.output().strip().split("\n");
            assertThat(Integer.parseInt(lines[lines.length - 1])).as("processes the sandbox sees").isLessThan(10);
        }
    }

    @Test
    void nothingOutsideTheWorkFolderIsWritable() throws Exception {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("for f in /usr/panoptes-x /etc/panoptes-x /panoptes-x /proc/panoptes-x"
                    + " /dev/panoptes-x /.panoptes-x /home/x /root/x; do (echo x > $f) 2>/dev/null && echo \"wrote $f\"; done; echo x > /work/ok"
                    + " && echo wrote-work");
            assertThat(r.output()).isEqualTo("wrote-work\n");
            assertThat(Path.of("/usr/panoptes-x")).doesNotExist();
            assertThat(Path.of("/etc/panoptes-x")).doesNotExist();
        }
    }

    @Test
    void aForkBombMeetsTheSandboxsProcessLimitAndNothingElse() throws Exception {
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (Sandbox bomb = sandboxes.open(); Sandbox neighbour = sandboxes.open()) {
            Future<CommandResult> exploding = other.submit(() -> bomb.run("bomb() { bomb | bomb & }; bomb",
                    Duration.ofSeconds(3)));
            // While the bomb goes off: the neighbour runs several processes, and this JVM starts one.
            CommandResult meanwhile = neighbour.run("for i in 1 2 3 4 5; do sh -c 'echo $$' & done; wait; echo done");
            assertThat(meanwhile.output()).endsWith("done\n");
            Process host = new ProcessBuilder("true").start();
            assertThat(host.waitFor(10, TimeUnit.SECONDS)).isTrue();
            CommandResult r = exploding.get(30, TimeUnit.SECONDS);
            assertThat(r.failure()).isNull();
            assertThat(r.duration()).isLessThan(Duration.ofSeconds(3).plus(Sandbox.GRACE));
            CommandResult after = bomb.run("ls /proc | grep -c '^[0-9]'");
            assertThat(Integer.parseInt(after.output().strip())).as("processes left after the bomb").isLessThan(8);
        } finally {
            other.shutdownNow();
        }
    }

    @Test
    void allocatingTenGigabytesFailsInsideTheCommand() throws Exception {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("python3 -c 'x = bytearray(10 * 1024 ** 3); print(len(x))'");
            assertThat(r.exitStatus()).isEqualTo(1);
            assertThat(r.output()).contains("MemoryError");
            assertThat(s.run("echo fine").output()).isEqualTo("fine\n");
        }
    }

    @Test
    void fillingTheDiskStopsAtTheWorkFoldersSize() throws Exception {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("head -c 2G /dev/zero > /work/big; echo status=$?;"
                    + " echo work=$(du -m /work/big | cut -f1); head -c 1G /dev/zero > /tmp/big;"
                    + " echo tmp=$(du -m /tmp/big | cut -f1)");
            assertThat(r.output()).contains("No space left on device").contains("status=1");
            assertThat(megabytes(r.output(), "work")).as("MiB written to /work").isBetween(15, 16);
            assertThat(megabytes(r.output(), "tmp")).as("MiB written to /tmp").isBetween(7, 8);
            // Full, the work folder still runs commands and gets space back when a file goes.
            assertThat(s.run("rm /work/big && echo x > /work/small && cat /work/small").output()).isEqualTo("x\n");
        }
    }

    private static int megabytes(String output, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + name + "=(\\d+)$").matcher(output);
        assertThat(m.find()).as(name + "= in " + output).isTrue();
        return Integer.parseInt(m.group(1));
    }

    @Test
    void sleepingForeverIsKilledAtTheTimeLimit() throws Exception {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("trap '' TERM; sleep infinity", Duration.ofSeconds(1));
            assertThat(r.timedOut()).isTrue();
            assertThat(r.exitStatus()).isEqualTo(137);
            assertThat(r.duration()).isGreaterThanOrEqualTo(Duration.ofSeconds(1)).isLessThan(Duration.ofSeconds(6));
            assertThat(s.run("echo awake").output()).isEqualTo("awake\n");
        }
    }

    @Test
    void aProcessLeftBehindIsKilledWhenItsCommandEnds() throws Exception {
        try (Sandbox s = sandboxes.open()) {
            CommandResult r = s.run("sleep 1001 & setsid sleep 1002 & nohup sh -c 'while :; do echo tick >> /work/log;"
                    + " sleep 0.1; done' >/dev/null 2>&1 & while [ ! -s /work/log ]; do sleep 0.05; done; echo started");
            assertThat(r.output()).isEqualTo("started\n");
            assertThat(r.duration()).isLessThan(Duration.ofSeconds(5));
            CommandResult left = s.run("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"
                    + " | grep -c -e 'slee[p] 100' -e 'tic[k]'; wc -l < /work/log > /work/n1; sleep 0.5;"
                    + " wc -l < /work/log > /work/n2; cmp -s /work/n1 /work/n2 && echo log-still");
            assertThat(left.output()).isEqualTo("0\nlog-still\n");
        }
    }
}
