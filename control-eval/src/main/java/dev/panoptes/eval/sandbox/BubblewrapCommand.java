package dev.panoptes.eval.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that starts one sandbox: bubblewrap with every namespace new (user, mount,
 * PID, IPC, UTS, network, cgroup), no capabilities, no further user namespaces, the system's
 * {@code /usr} read-only and a few files of {@code /etc} (no home, no {@code /tmp}, no
 * {@code /run} of the host), five devices ({@code /dev/null}, {@code zero}, {@code full},
 * {@code random}, {@code urandom}), a read-only root, an empty environment, in-memory {@code /work} and {@code /tmp} of
 * bounded size, and {@code driver.sh} as its one process. Pure: builds the list, starts nothing.
 *
 * <p>When the worker runs as root it is run through {@code setpriv} as {@code nobody}, because the
 * kernel never limits the processes of root, even mapped into a user namespace: a fork bomb would
 * be unbounded. As any other user, the limit set inside the sandbox's own user namespace counts
 * that sandbox's processes alone.
 */
final class BubblewrapCommand {
    /** The unprivileged user a root worker runs its sandboxes as. */
    static final String NOBODY = "65534";
    /** Where the driver keeps each command's output: its size bounds what is kept. */
    static final String OUTPUT_DIR = "/.panoptes";
    private static final long PAGE = 4096;

    /** The files of /etc a shell and Python want, and nothing of the host's secrets. */
    private static final List<String> ETC = List.of("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf",
            "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime",
            "/etc/mime.types");
    /** The devices a command may use; no others exist in the sandbox. */
    private static final List<String> DEVICES = List.of("/dev/null", "/dev/zero", "/dev/full", "/dev/random",
            "/dev/urandom");
    /** Top-level folders that merged-/usr systems make symlinks into /usr. */
    private static final List<String> USR_LINKS = List.of("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32");

    private static final String DRIVER = readDriver();

    private BubblewrapCommand() {
    }

    /**
     * The argv.
     *
     * @param bwrap   the bubblewrap executable
     * @param setpriv {@code setpriv}, to run as {@link #NOBODY}; null to run as the worker's user
     * @param limits  the sizes and limits to apply
     */
    static List<String> argv(Path bwrap, Path setpriv, SandboxLimits limits) {
        List<String> a = new ArrayList<>();
        if (setpriv != null) {
            a.addAll(List.of(setpriv.toString(), "--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"));
        }
        a.add(bwrap.toString());
        a.addAll(List.of("--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
                "--die-with-parent", "--new-session", "--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
                "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/work",
                "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp",
                "--ro-bind", "/usr", "/usr"));
        for (String dir : USR_LINKS) {
            Path p = Path.of(dir);
            if (Files.isSymbolicLink(p)) {
                a.addAll(List.of("--symlink", readLink(p), dir));
            } else if (Files.isDirectory(p)) {
                a.addAll(List.of("--ro-bind", dir, dir));
            }
        }
        for (String etc : ETC) {
            a.addAll(List.of("--ro-bind-try", etc, etc));
        }
        // Devices one by one rather than --dev, whose /dev is a writable tmpfs of no set size.
        a.addAll(List.of("--proc", "/proc"));
        for (String dev : DEVICES) {
            a.addAll(List.of("--dev-bind", dev, dev));
        }
        a.addAll(List.of("--symlink", "/proc/self/fd", "/dev/fd", "--symlink", "/proc/self/fd/0", "/dev/stdin",
                "--symlink", "/proc/self/fd/1", "/dev/stdout", "--symlink", "/proc/self/fd/2", "/dev/stderr",
                "--size", Long.toString(limits.workBytes()), "--tmpfs", "/work",
                "--size", Long.toString(limits.tmpBytes()), "--tmpfs", "/tmp",
                "--size", Long.toString(outputBytes(limits)), "--tmpfs", OUTPUT_DIR,
                // The root bubblewrap builds is a tmpfs of no set size: read-only once built.
                "--remount-ro", "/",
                "--chdir", "/work",
                "--", "/usr/bin/bash", "-c", DRIVER, "panoptes-sandbox",
                Long.toString(limits.memoryBytes() / 1024), Integer.toString(limits.processes())));
        return a;
    }

    /**
     * The size of the output folder: what is kept rounded up to a page, plus a page, so that
     * output past what is kept still lands (then it is known to be cut) before the disk is full.
     */
    static long outputBytes(SandboxLimits limits) {
        return (limits.keptOutputBytes() + PAGE - 1) / PAGE * PAGE + PAGE;
    }

    private static String readLink(Path p) {
        try {
            return Files.readSymbolicLink(p).toString();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the symlink " + p + ": " + e.getMessage(), e);
        }
    }

    private static String readDriver() {
        try (InputStream in = BubblewrapCommand.class.getResourceAsStream("driver.sh")) {
            if (in == null) {
                throw new IllegalStateException("driver.sh is missing from the classpath next to "
                        + BubblewrapCommand.class.getName() + ": the jar is broken");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
