package dev.panoptes.worker;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/** Worker ids as PROTOCOL.md allows them: 1 to 128 characters from {@code [A-Za-z0-9._:@-]}. */
public final class WorkerIds {
    /** The longest id the protocol allows. */
    public static final int MAX_LENGTH = 128;

    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9._:@-]{1," + MAX_LENGTH + "}");
    private static final Pattern INVALID_CHARS = Pattern.compile("[^A-Za-z0-9._:@-]+");

    private WorkerIds() {
    }

    /** True when {@code id} is a valid worker id. Any thread. */
    public static boolean isValid(String id) {
        return id != null && VALID.matcher(id).matches();
    }

    /**
     * Returns {@code id} when it is valid.
     *
     * @throws IllegalArgumentException naming the rule and the id when it is not
     */
    public static String requireValid(String id) {
        if (!isValid(id)) {
            throw new IllegalArgumentException("worker id must be 1 to " + MAX_LENGTH
                    + " characters from [A-Za-z0-9._:@-], got '" + id + "'");
        }
        return id;
    }

    /**
     * Checks a worker's capacity, the jobs it runs at once.
     *
     * @return the capacity
     * @throws IllegalArgumentException when below 1, naming the worker
     */
    public static int requireCapacity(String workerId, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity of worker " + workerId + " must be at least 1, got "
                    + capacity);
        }
        return capacity;
    }

    /**
     * The default id of this process, {@code <hostname>-<pid>}, made valid: runs of other
     * characters become {@code -} and the host name is shortened so that the whole fits in 128
     * characters. Falls back to {@code worker-<pid>} when the host name cannot be found.
     */
    public static String defaultId() {
        return fromHostAndPid(localHostName(), ProcessHandle.current().pid());
    }

    /** {@code <host>-<pid>} made valid, as {@link #defaultId()} describes. */
    public static String fromHostAndPid(String host, long pid) {
        String suffix = "-" + pid;
        String cleanHost = host == null ? "" : INVALID_CHARS.matcher(host).replaceAll("-");
        if (cleanHost.isEmpty() || cleanHost.chars().allMatch(c -> c == '-')) {
            cleanHost = "worker";
        }
        int room = MAX_LENGTH - suffix.length();
        if (cleanHost.length() > room) {
            cleanHost = cleanHost.substring(0, room);
        }
        return requireValid(cleanHost + suffix);
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            // A machine without a resolvable name still gets a usable, unique-enough id.
            return null;
        }
    }
}
