package dev.panoptes.remote;

import dev.panoptes.control.Plural;
import java.net.InetAddress;
import java.util.function.Consumer;

/**
 * The warnings for connections refused by one cap on unregistered connections, at most one line
 * per {@link #INTERVAL_MS} however many are refused: a flood of connects must not become a flood
 * of log lines (which would cost the disk and the CPU the cap saves). The first refusal after a
 * quiet interval is logged in full (address, cap, the option that raises it, what it may mean);
 * the ones after it are counted, and the count is logged once the interval ends, naming the last
 * address, for as long as refusals go on.
 *
 * <p>Loop 0's thread only (the accepting thread), and its timer runs there too.
 */
final class RefusalLog {
    /** At most one line per this many milliseconds per cap. */
    static final long INTERVAL_MS = 10_000;

    private final UnregisteredConnections.Refusal cap;
    private final int limit;
    private final SelectorLoop loop;
    private final Consumer<String> warn;

    // ---- loop 0's thread only
    /** Until when refusals are only counted. */
    private long quietUntilMs = Long.MIN_VALUE;
    private long suppressed;
    private InetAddress lastAddress;
    private boolean summaryScheduled;

    /**
     * @param cap   the cap whose refusals this logs
     * @param limit its value, for the lines
     * @param loop  loop 0: its clock and timers
     * @param warn  where lines go (the acceptor's logger at warn level)
     */
    RefusalLog(UnregisteredConnections.Refusal cap, int limit, SelectorLoop loop, Consumer<String> warn) {
        this.cap = cap;
        this.limit = limit;
        this.loop = loop;
        this.warn = warn;
    }

    /** A connection from {@code address} was refused by this cap and closed. */
    void refused(InetAddress address) {
        long now = loop.nowMs();
        if (now >= quietUntilMs) {
            warn.accept(firstLine(address));
            quietUntilMs = now + INTERVAL_MS;
            return;
        }
        suppressed++;
        lastAddress = address;
        if (!summaryScheduled) {
            summaryScheduled = true;
            loop.schedule(quietUntilMs, this::summarize);
        }
    }

    private void summarize() {
        summaryScheduled = false;
        if (suppressed == 0) {
            return;
        }
        warn.accept("worker=- job=- - refused " + Plural.of(suppressed, "more connection", "more connections")
                + " in the last " + INTERVAL_MS / 1000
                + " s, each closed at once: " + limitText() + " (the last from " + lastAddress.getHostAddress() + ")");
        suppressed = 0;
        // A flood that goes on gets one such line per interval, never one per connection.
        quietUntilMs = loop.nowMs() + INTERVAL_MS;
    }

    private String limitText() {
        return cap == UnregisteredConnections.Refusal.TOTAL
                ? Plural.of(limit, "connection") + " " + verb(limit, "was", "were")
                        + " waiting to register, the most allowed (maxUnregisteredConnections)"
                : Plural.of(limit, "connection") + " from one address " + verb(limit, "was", "were")
                        + " waiting to register, the most allowed per address"
                        + " (maxUnregisteredPerAddress)";
    }

    /** The verb that goes with {@code n} connections. */
    private static String verb(int n, String one, String many) {
        return n == 1 ? one : many;
    }

    private String firstLine(InetAddress address) {
        String host = address.getHostAddress();
        if (cap == UnregisteredConnections.Refusal.TOTAL) {
            return "worker=- job=- - refused a connection from " + host + " and closed it at once: "
                    + Plural.of(limit, "connection") + " " + verb(limit, "is", "are")
                    + " waiting to register, the most allowed (ServerOptions"
                    + ".maxUnregisteredConnections). Registered workers are not affected. Peers are connecting"
                    + " without registering (a flood or a scanner), or more workers than that reconnect at once:"
                    + " then raise maxUnregisteredConnections. Further refusals are counted, one line per "
                    + INTERVAL_MS / 1000 + " s";
        }
        return "worker=- job=- - refused a connection from " + host + " and closed it at once: "
                + Plural.of(limit, "connection") + " from " + host + " " + verb(limit, "is", "are")
                + " waiting to register, the most allowed per address"
                + " (ServerOptions.maxUnregisteredPerAddress). Registered workers are not affected. If many"
                + " workers share that address (one large machine, a NAT gateway), raise maxUnregisteredPerAddress;"
                + " otherwise that host opens connections without registering. Further refusals are counted, one"
                + " line per " + INTERVAL_MS / 1000 + " s";
    }
}
