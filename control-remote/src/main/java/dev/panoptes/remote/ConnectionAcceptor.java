package dev.panoptes.remote;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
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

    // ---- loop 0's thread only
    private SelectionKey key;
    private long backoffMs;
    private long failures;
    private long firstFailureMs;

    /**
     * @param loop    the loop whose thread accepts (loop 0)
     * @param address the listening address, for messages
     * @param handOff gives an accepted, non-blocking channel to some loop
     */
    ConnectionAcceptor(Accept accept, SelectorLoop loop, InetSocketAddress address, Consumer<SocketChannel> handOff) {
        this.accept = accept;
        this.loop = loop;
        this.address = address;
        this.handOff = handOff;
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
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException e) {
                log.debug("worker=- job=- - dropping a connection that failed while being set up: {}", e.toString());
                Closer.closeAll(channel);
                continue;
            }
            handOff.accept(channel);
        }
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
