package dev.panoptes.eval.sandbox;

import java.time.Duration;
import java.util.Objects;

/**
 * What one sandbox may use. Each limit is enforced by the kernel or by the sandbox's own
 * processes, never by trusting the command:
 *
 * <ul>
 *   <li>{@code commandTimeout}: wall time of one command; then it and everything it started is
 *       killed (SIGKILL), and the command's result says it timed out.</li>
 *   <li>{@code memoryBytes}: the address space of each process ({@code ulimit -v}): an
 *       allocation past it fails inside the command.</li>
 *   <li>{@code processes}: processes at once in the sandbox ({@code ulimit -u}, which the kernel
 *       counts per user namespace, so per sandbox: a fork bomb meets this limit, not the worker's).</li>
 *   <li>{@code workBytes}, {@code tmpBytes}: the size of the writable work folder ({@code /work})
 *       and of {@code /tmp}, both in memory (tmpfs): a command that fills them gets "no space
 *       left on device". The sandbox's memory footprint is at most these two plus
 *       {@code keptOutputBytes}.</li>
 *   <li>{@code keptOutputBytes}: the output kept per command (stdout and stderr together); the
 *       rest is lost and the result says so.</li>
 *   <li>{@code modelOutputBytes}: how much of a command's output a model is shown, the cut marked.</li>
 * </ul>
 *
 * @param commandTimeout   positive
 * @param memoryBytes      at least 64 MiB
 * @param processes        at least 8: the sandbox's own shell, {@code timeout} and the command need some
 * @param workBytes        at least 1 MiB
 * @param tmpBytes         at least 1 MiB
 * @param keptOutputBytes  at least 1 KiB
 * @param modelOutputBytes at least 256, at most {@code keptOutputBytes}
 */
public record SandboxLimits(Duration commandTimeout, long memoryBytes, int processes, long workBytes, long tmpBytes,
                            long keptOutputBytes, int modelOutputBytes) {
    private static final long MIB = 1024 * 1024;

    /** @throws IllegalArgumentException naming the limit that is out of range */
    public SandboxLimits {
        Objects.requireNonNull(commandTimeout, "commandTimeout");
        if (commandTimeout.isZero() || commandTimeout.isNegative()) {
            throw new IllegalArgumentException("a sandbox's command timeout must be positive, got " + commandTimeout);
        }
        atLeast(memoryBytes, 64 * MIB, "memory limit");
        atLeast(processes, 8, "process limit");
        atLeast(workBytes, MIB, "work folder size");
        atLeast(tmpBytes, MIB, "/tmp size");
        atLeast(keptOutputBytes, 1024, "output kept per command");
        atLeast(modelOutputBytes, 256, "output shown to the model");
        if (modelOutputBytes > keptOutputBytes) {
            throw new IllegalArgumentException("a sandbox cannot show the model more output (" + modelOutputBytes
                    + " bytes) than it keeps (" + keptOutputBytes + " bytes)");
        }
    }

    /**
     * 30 s per command, 1 GiB of address space per process, 64 processes, a 256 MiB work folder,
     * 64 MiB of /tmp, 10 MiB of output kept per command and 16 KiB of it shown to the model.
     */
    public static SandboxLimits defaults() {
        return new SandboxLimits(Duration.ofSeconds(30), 1024 * MIB, 64, 256 * MIB, 64 * MIB, 10 * MIB, 16 * 1024);
    }

    /** These limits with another wall time per command. */
    public SandboxLimits withCommandTimeout(Duration timeout) {
        return new SandboxLimits(timeout, memoryBytes, processes, workBytes, tmpBytes, keptOutputBytes,
                modelOutputBytes);
    }

    /** These limits with another work folder size. */
    public SandboxLimits withWorkBytes(long bytes) {
        return new SandboxLimits(commandTimeout, memoryBytes, processes, bytes, tmpBytes, keptOutputBytes,
                modelOutputBytes);
    }

    /** These limits with another address space limit per process. */
    public SandboxLimits withMemoryBytes(long bytes) {
        return new SandboxLimits(commandTimeout, bytes, processes, workBytes, tmpBytes, keptOutputBytes,
                modelOutputBytes);
    }

    /** These limits with another process limit. */
    public SandboxLimits withProcesses(int count) {
        return new SandboxLimits(commandTimeout, memoryBytes, count, workBytes, tmpBytes, keptOutputBytes,
                modelOutputBytes);
    }

    private static void atLeast(long value, long min, String what) {
        if (value < min) {
            throw new IllegalArgumentException("a sandbox's " + what + " must be at least " + min + ", got " + value);
        }
    }
}
