package dev.panoptes.remote;

import java.net.InetAddress;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The connections of one server that have not registered yet, counted in total and per remote IP
 * address against {@link ServerOptions#maxUnregisteredConnections()} and
 * {@link ServerOptions#maxUnregisteredPerAddress()}: what peers without a token can make the
 * coordinator hold is bounded by the caps, not by how fast they connect.
 *
 * <p>A connection is counted from {@link #admit} (at accept, before anything is allocated for it)
 * until {@link #release} (when {@code register} succeeds, or when it closes), exactly once each
 * way: its entry is keyed by its channel, and only the call that removes the entry uncounts it,
 * so that a release at registration and another at close, or a close racing
 * {@link #releaseClosed()}, count once. A channel that was never admitted (a test adopting one by
 * hand) is not counted, and releasing it does nothing.
 *
 * <p><b>Threads.</b> {@link #admit} on the accepting thread only (loop 0's): it is the only one
 * that adds, so a count it reads can only fall before it adds. Everything else, any thread.
 */
final class UnregisteredConnections {
    /** Which cap refused a connection. */
    enum Refusal {
        /** {@link ServerOptions#maxUnregisteredConnections()}. */
        TOTAL,
        /** {@link ServerOptions#maxUnregisteredPerAddress()}. */
        PER_ADDRESS
    }

    /** How often, at most, a refusal walks the counted channels for closed ones (it costs one pass over them). */
    static final long SWEEP_INTERVAL_MS = 1_000;

    private final int maxTotal;
    private final int maxPerAddress;
    /** Every counted connection and the address it is counted under. */
    private final ConcurrentHashMap<SocketChannel, InetAddress> waiting = new ConcurrentHashMap<>();
    /** Counted connections per address; an address leaves the map when its count reaches 0. */
    private final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    /** When a refusal may next look for closed channels to uncount; accepting thread only. */
    private long nextSweepMs = Long.MIN_VALUE;

    UnregisteredConnections(ServerOptions options) {
        this.maxTotal = options.maxUnregisteredConnections();
        this.maxPerAddress = options.maxUnregisteredPerAddress();
    }

    /**
     * Counts a newly accepted connection, unless a cap is reached. When one is, the channels
     * already closed are uncounted first (at most once per {@link #SWEEP_INTERVAL_MS}), so that
     * a cap is never held by connections that are gone. Accepting thread only.
     *
     * @param nowMs the accepting loop's clock
     * @return null when counted; otherwise the cap that refused it (and it is not counted)
     */
    Refusal admit(SocketChannel channel, InetAddress address, long nowMs) {
        Refusal refusal = capReached(address);
        if (refusal != null && nowMs >= nextSweepMs) {
            nextSweepMs = nowMs + SWEEP_INTERVAL_MS;
            if (releaseClosed() > 0) {
                refusal = capReached(address);
            }
        }
        if (refusal != null) {
            refused.incrementAndGet();
            return refusal;
        }
        total.incrementAndGet();
        perAddress.merge(address, 1, Integer::sum);
        waiting.put(channel, address);
        return null;
    }

    private Refusal capReached(InetAddress address) {
        if (total.get() >= maxTotal) {
            return Refusal.TOTAL;
        }
        if (perAddress.getOrDefault(address, 0) >= maxPerAddress) {
            return Refusal.PER_ADDRESS;
        }
        return null;
    }

    /**
     * Stops counting {@code channel}: it registered, or it closed. Any thread; idempotent.
     *
     * @return true when this call uncounted it, false when it was not counted (any more)
     */
    boolean release(SocketChannel channel) {
        InetAddress address = waiting.remove(channel);
        if (address == null) {
            return false;
        }
        perAddress.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
        total.decrementAndGet();
        return true;
    }

    /**
     * Uncounts every counted channel that is closed already. A connection's own close releases
     * it; this catches the few that close without ever becoming a connection (closed before a
     * loop adopted them, or by a loop shutting down). Any thread.
     *
     * @return how many it uncounted
     */
    int releaseClosed() {
        int released = 0;
        for (Map.Entry<SocketChannel, InetAddress> e : waiting.entrySet()) {
            if (!e.getKey().isOpen() && release(e.getKey())) {
                released++;
            }
        }
        return released;
    }

    /** Connections counted now. Any thread. */
    int count() {
        return total.get();
    }

    /** Connections from {@code address} counted now. Any thread. */
    int count(InetAddress address) {
        return perAddress.getOrDefault(address, 0);
    }

    /** Addresses with at least one connection counted now. Any thread. */
    int addresses() {
        return perAddress.size();
    }

    /** Connections refused by a cap since the server started. Any thread. */
    long refused() {
        return refused.get();
    }

    int maxTotal() {
        return maxTotal;
    }

    int maxPerAddress() {
        return maxPerAddress;
    }
}
