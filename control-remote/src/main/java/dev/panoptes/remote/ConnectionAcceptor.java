package dev.panoptes.remote;

import dev.panoptes.control.Plural;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.panoptes.control.wire.Message;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * Accepts worker connections on loop 0's thread and hands each to a loop.
 *
 * <p>When {@code accept} fails (most often EMFILE or ENFILE: the process or the system is out of
 * file descriptors), the listening key stops asking for {@code OP_ACCEPT} for a backoff of 10 ms
 * doubling to 1 s, instead of being selected again at once and spinning a core: the waiting
 * connection stays in the kernel's backlog and is taken when descriptors free up. The first
 * failure of such an episode is logged as a warning with advice, the rest at debug, and the end
 * of the episode once.
 *
 * <p><b>Caps.</b> Each accepted connection is counted in {@link UnregisteredConnections} until it
 * registers or closes. One beyond {@link ServerOptions#maxUnregisteredConnections()} or
 * {@link ServerOptions#maxUnregisteredPerAddress()} is closed here at once, before it reaches a
 * loop or anything is allocated for it; in plaintext it first gets a retryable {@code rejected}
 * frame saying which cap (one non-blocking write, best effort: a worker that already sent
 * {@code register} may see a reset instead), over TLS nothing, since no TLS session exists yet.
 * The refusals are logged through a {@link RefusalLog} per cap: one line per interval, not one
 * per connection. The server's listener is not told of them, so that a flood costs no work per
 * connection beyond accept and close.
 *
 * <p>Loop 0's thread only, apart from construction.
 */
final class ConnectionAcceptor implements SelectorLoop.Acceptor {
    private static final Logger log = LoggerFactory.getLogger(ConnectionAcceptor.class);
    /** Accepts per readiness event, so that a connection storm does not starve loop 0's own connections. */
    static final int MAX_ACCEPTS_PER_EVENT = 64;
    static final long FIRST_BACKOFF_MS = 10;
    static final long MAX_BACKOFF_MS = 1_000;

    /** {@link java.nio.channels.ServerSocketChannel#accept()}, or a stand-in in tests. */
    @FunctionalInterface
    interface Accept {
        /** @return a connection, or null when none is waiting */
        SocketChannel accept() throws IOException;
    }

    private final Accept accept;
    private final SelectorLoop loop;
    private final InetSocketAddress address;
    private final Consumer<SocketChannel> handOff;
    private final UnregisteredConnections unregistered;
    /** What a plaintext peer refused by each cap reads before the end; null over TLS. */
    private final byte[] overTotalFrame;
    private final byte[] overPerAddressFrame;
    private final RefusalLog overTotal;
    private final RefusalLog overPerAddress;

    // ---- loop 0's thread only
    private SelectionKey key;
    private long backoffMs;
    private long failures;
    private long firstFailureMs;

    /**
     * @param loop    the loop whose thread accepts (loop 0)
     * @param context the server's: its caps, counts and codec
     * @param address the listening address, for messages
     * @param handOff gives an accepted, non-blocking, counted channel to some loop
     */
    ConnectionAcceptor(Accept accept, SelectorLoop loop, ServerContext context, InetSocketAddress address,
                       Consumer<SocketChannel> handOff) {
        this(accept, loop, context, address, handOff, log::warn);
    }

    /** As above, with the refusal warnings going to {@code warn} (tests read them). */
    ConnectionAcceptor(Accept accept, SelectorLoop loop, ServerContext context, InetSocketAddress address,
                       Consumer<SocketChannel> handOff, Consumer<String> warn) {
        this.accept = accept;
        this.loop = loop;
        this.address = address;
        this.handOff = handOff;
        this.unregistered = context.unregistered;
        int total = unregistered.maxTotal();
        int perAddress = unregistered.maxPerAddress();
        if (context.options.tls()) {
            this.overTotalFrame = null;
            this.overPerAddressFrame = null;
        } else {
            this.overTotalFrame = context.encodeFrame(new Message.Rejected("the coordinator has "
                    + Plural.of(total, "connection")
                    + " waiting to register, the most it allows (maxUnregisteredConnections); retry"
                    + " later", true));
            this.overPerAddressFrame = context.encodeFrame(new Message.Rejected("the coordinator has "
                    + Plural.of(perAddress, "connection")
                    + " from this worker's address waiting to register, the most it allows per address"
                    + " (maxUnregisteredPerAddress); retry later, or have its operator raise the limit if many"
                    + " workers share the address", true));
        }
        this.overTotal = new RefusalLog(UnregisteredConnections.Refusal.TOTAL, total, loop, warn);
        this.overPerAddress = new RefusalLog(UnregisteredConnections.Refusal.PER_ADDRESS, perAddress, loop, warn);
    }

    /** The listening channel's key in loop 0's selector; set once, before the loop runs. */
    void attach(SelectionKey key) {
        this.key = key;
    }

    @Override
    public void onAcceptable() {
        for (int i = 0; i < MAX_ACCEPTS_PER_EVENT; i++) {
            SocketChannel channel;
            try {
                channel = accept.accept();
            } catch (ClosedChannelException e) {
                return; // close() is under way
            } catch (IOException e) {
                pause(e);
                return;
            }
            if (channel == null) {
                return;
            }
            if (failures > 0) {
                log.info("worker=- job=- - accepting on {} again after {} failed attempts over {} ms", address, failures,
                        loop.nowMs() - firstFailureMs);
                failures = 0;
                backoffMs = 0;
            }
            if (!admit(channel)) {
                continue;
            }
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException e) {
                log.debug("worker=- job=- - dropping a connection that failed while being set up: {}", e.toString());
                Closer.closeAll(channel);
                unregistered.release(channel);
                continue;
            }
            handOff.accept(channel);
        }
    }

    /**
     * Counts the connection, or refuses it: closes it at once (after a {@code rejected} frame in
     * plaintext) and logs it through its cap's rate-limited log.
     *
     * @return true when it is counted and goes on to a loop
     */
    private boolean admit(SocketChannel channel) {
        InetAddress peer;
        try {
            peer = ((InetSocketAddress) channel.getRemoteAddress()).getAddress();
        } catch (IOException | RuntimeException e) {
            log.debug("worker=- job=- - dropping a connection whose peer is unknown: {}", e.toString());
            Closer.closeAll(channel);
            return false;
        }
        UnregisteredConnections.Refusal refusal = unregistered.admit(channel, peer, loop.nowMs());
        if (refusal == null) {
            return true;
        }
        boolean total = refusal == UnregisteredConnections.Refusal.TOTAL;
        byte[] frame = total ? overTotalFrame : overPerAddressFrame;
        if (frame != null) {
            try {
                // Non-blocking: a fresh socket's send buffer takes a few hundred bytes at once, and
                // a peer that does not read gets nothing rather than a wait.
                channel.configureBlocking(false);
                channel.write(ByteBuffer.wrap(frame));
            } catch (IOException e) {
                log.debug("worker=- job=- - could not tell {} it was refused: {}", peer, e.toString());
            }
        }
        Closer.closeAll(channel);
        (total ? overTotal : overPerAddress).refused(peer);
        return false;
    }

    /** Failed attempts in the current episode; 0 once an accept succeeds. */
    long failures() {
        return failures;
    }

    private void pause(IOException e) {
        long now = loop.nowMs();
        if (failures++ == 0) {
            firstFailureMs = now;
            log.warn("worker=- job=- - accepting a worker connection on {} failed: {}; pausing accepts and retrying"
                    + " with backoff up to {} ms. If it says too many open files, raise the process's file limit"
                    + " (ulimit -n) or run fewer workers per coordinator", address, e.toString(), MAX_BACKOFF_MS);
        } else {
            log.debug("worker=- job=- - accepting on {} failed again ({} in a row): {}", address, failures,
                    e.toString());
        }
        backoffMs = backoffMs == 0 ? FIRST_BACKOFF_MS : Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        if (key == null || !key.isValid()) {
            return;
        }
        key.interestOps(0);
        loop.schedule(now + backoffMs, () -> {
            if (key.isValid()) {
                key.interestOps(SelectionKey.OP_ACCEPT);
            }
        });
    }
}
