package dev.panoptes.remote;

import dev.panoptes.control.wire.MessageCodec;
import dev.panoptes.remote.tls.PemFiles;

import javax.net.ssl.SSLContext;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link WorkerServer} listens and how strictly it treats its workers. Immutable and
 * thread-safe; build one with {@link #builder()}.
 *
 * <p>Defaults follow docs/PROTOCOL.md: 127.0.0.1:7070, no token, heartbeat every 5 s, a worker
 * reaped after 3 x the interval of silence or of not reading, 10 s to send {@code register},
 * 64 KiB frames until then and 16 MiB after, capacity clamped to 1024, at most 1,024 connections
 * waiting to register (64 from one address), plaintext TCP (TLS with
 * {@link Builder#tls(Path, Path, Path)} or {@link Builder#tls(SSLContext, boolean)}).
 */
public final class ServerOptions {
    /** The port a coordinator listens on unless told otherwise. */
    public static final int DEFAULT_PORT = 7070;
    /** The smallest frame limit accepted: every coordinator frame but {@code assign} fits well under it. */
    public static final int MIN_FRAME_BYTES = 1024;
    /** The default frame limit until {@code register} succeeds: a register frame is a few hundred bytes. */
    public static final int DEFAULT_HANDSHAKE_FRAME_BYTES = 64 * 1024;
    /**
     * The default cap on connections that have not registered yet. It bounds what peers without a
     * token can make the coordinator hold: at most this many times the handshake frame limit
     * (64 MiB at the defaults) in plaintext, or as many TLS sessions in their handshake (about
     * 66 KiB of buffers each: 66 MiB). It is the size of the accept backlog, so the connections
     * of a burst that fits the backlog are not refused for it.
     */
    public static final int DEFAULT_MAX_UNREGISTERED_CONNECTIONS = 1024;
    /**
     * The default cap on connections from one address (IP, any port) that have not registered
     * yet: a sixteenth of {@link #DEFAULT_MAX_UNREGISTERED_CONNECTIONS}, so that one host (a
     * scanner, a client in a reconnect loop) cannot take the room every other host needs, while
     * 64 worker processes on one machine, or behind one NAT address, may still reconnect at once.
     */
    public static final int DEFAULT_MAX_UNREGISTERED_PER_ADDRESS = 64;

    private final InetSocketAddress bind;
    private final String token;
    private final Duration heartbeatInterval;
    private final Duration heartbeatTimeout;
    private final Duration handshakeTimeout;
    private final int maxFrameBytes;
    private final int maxCapacity;
    private final int selectorThreads;
    private final int completionThreads;
    private final int dispatchQueueCapacity;
    private final Duration writeStallTimeout;
    private final int handshakeFrameBytes;
    private final boolean directCompletions;
    private final SSLContext tlsContext;
    private final boolean requireClientCertificate;
    private final int maxUnregisteredConnections;
    private final int maxUnregisteredPerAddress;

    private ServerOptions(Builder b, Duration heartbeatTimeout, Duration writeStallTimeout, int perAddress) {
        this.bind = b.bind;
        this.token = b.token;
        this.heartbeatInterval = b.heartbeatInterval;
        this.heartbeatTimeout = heartbeatTimeout;
        this.handshakeTimeout = b.handshakeTimeout;
        this.maxFrameBytes = b.maxFrameBytes;
        this.maxCapacity = b.maxCapacity;
        this.selectorThreads = b.selectorThreads;
        this.completionThreads = b.completionThreads;
        this.dispatchQueueCapacity = b.dispatchQueueCapacity;
        this.writeStallTimeout = writeStallTimeout;
        this.handshakeFrameBytes = Math.min(b.handshakeFrameBytes, b.maxFrameBytes);
        this.directCompletions = b.directCompletions;
        this.tlsContext = b.tlsContext;
        this.requireClientCertificate = b.requireClientCertificate;
        this.maxUnregisteredConnections = b.maxUnregisteredConnections;
        this.maxUnregisteredPerAddress = perAddress;
    }

    /** A builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** The defaults, unchanged. */
    public static ServerOptions defaults() {
        return builder().build();
    }

    /** The address to listen on; port 0 picks a free port ({@link WorkerServer#address()} tells which). */
    public InetSocketAddress bind() {
        return bind;
    }

    /** The shared secret every {@code register} must carry, or null when none is required. */
    public String token() {
        return token;
    }

    /** How often the coordinator sends a heartbeat to a quiet worker; also announced in {@code registered}. */
    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    /**
     * How long a worker may stay silent (not one byte received) before its connection is closed.
     * Also how long a worker has to answer a job the coordinator cancelled before its connection
     * is closed (docs/PROTOCOL.md, {@code cancel}).
     */
    public Duration heartbeatTimeout() {
        return heartbeatTimeout;
    }

    /**
     * How long bytes for a worker may wait unsent, the socket taking none of them, before its
     * connection is closed: a worker that stops reading is reaped even if it keeps heartbeating.
     */
    public Duration writeStallTimeout() {
        return writeStallTimeout;
    }

    /**
     * True when dispatch futures are completed on the selector thread that read the answer, in
     * the same loop pass, rather than on the completion threads: one thread hand-off fewer per
     * job (and, at one job in flight, a round trip that wakes the coordinator once instead of
     * three times). Only for callers whose callbacks never block and do little: queue an event,
     * dispatch the next job. A callback that blocks then stalls every connection of that thread.
     * False by default.
     */
    public boolean directCompletions() {
        return directCompletions;
    }

    /**
     * The frame limit until a connection has registered; at most {@link #maxFrameBytes()}. An
     * unauthenticated peer can make the coordinator buffer no more than this.
     */
    public int handshakeFrameBytes() {
        return handshakeFrameBytes;
    }

    /** How long a new connection has to send its {@code register} frame. */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /**
     * The most connections that may be waiting to register at once, counted from accept until
     * {@code register} succeeds or the connection closes (a TLS handshake in progress counts).
     * A connection accepted beyond it is closed at once, before anything is allocated for it;
     * registered workers are not counted and never affected.
     */
    public int maxUnregisteredConnections() {
        return maxUnregisteredConnections;
    }

    /**
     * The most connections from one IP address (any port) that may be waiting to register at
     * once; at most {@link #maxUnregisteredConnections()}. Beyond it, as beyond that cap, a new
     * connection from the address is closed at once.
     */
    public int maxUnregisteredPerAddress() {
        return maxUnregisteredPerAddress;
    }

    /** The largest frame body accepted from, and sent to, a worker. */
    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    /** The largest capacity a worker is credited with; larger claims are clamped to it. */
    public int maxCapacity() {
        return maxCapacity;
    }

    /**
     * The TLS context connections are served with (docs/PROTOCOL.md, "Transport security"), or
     * null for plaintext TCP, the default.
     */
    public SSLContext tlsContext() {
        return tlsContext;
    }

    /** True when TLS is on. */
    public boolean tls() {
        return tlsContext != null;
    }

    /**
     * True for mutual TLS: a worker must present a certificate the context trusts, or its
     * handshake fails. Without a token, such a certificate alone lets it register; with one, it
     * needs both.
     */
    public boolean requireClientCertificate() {
        return requireClientCertificate;
    }

    /** The number of selector threads hosting every connection; fixed for the server's life. */
    public int selectorThreads() {
        return selectorThreads;
    }

    /**
     * The number of threads that complete dispatch futures, and so run callers' callbacks.
     * A callback that blocks holds one of them; I/O never waits for them.
     */
    public int completionThreads() {
        return completionThreads;
    }

    /**
     * How many dispatches may wait per connection for a free slot of the worker before
     * {@link RemoteWorker#dispatch} blocks the caller.
     */
    public int dispatchQueueCapacity() {
        return dispatchQueueCapacity;
    }

    @Override
    public String toString() {
        return "ServerOptions[bind=" + bind + ", token=" + (token == null ? "none" : "***")
                + ", heartbeatInterval=" + heartbeatInterval.toMillis() + "ms, heartbeatTimeout="
                + heartbeatTimeout.toMillis() + "ms, handshakeTimeout=" + handshakeTimeout.toMillis()
                + "ms, maxFrameBytes=" + maxFrameBytes + ", maxCapacity=" + maxCapacity + ", selectorThreads="
                + selectorThreads + ", completionThreads=" + completionThreads + ", dispatchQueueCapacity="
                + dispatchQueueCapacity + ", writeStallTimeout=" + writeStallTimeout.toMillis()
                + "ms, handshakeFrameBytes=" + handshakeFrameBytes + ", directCompletions=" + directCompletions
                + ", tls=" + (tlsContext == null ? "off" : requireClientCertificate ? "mutual" : "on")
                + ", maxUnregisteredConnections=" + maxUnregisteredConnections + ", maxUnregisteredPerAddress="
                + maxUnregisteredPerAddress + "]";
    }

    /**
     * Collects options; {@link #build()} validates them together. Not thread-safe: one builder
     * per thread.
     */
    public static final class Builder {
        private InetSocketAddress bind = new InetSocketAddress("127.0.0.1", DEFAULT_PORT);
        private String token;
        private Duration heartbeatInterval = Duration.ofSeconds(5);
        private Duration heartbeatTimeout;
        private Duration handshakeTimeout = Duration.ofSeconds(10);
        private int maxFrameBytes = MessageCodec.DEFAULT_MAX_FRAME_BYTES;
        private int maxCapacity = 1024;
        private int selectorThreads = Math.min(2, Runtime.getRuntime().availableProcessors());
        private int completionThreads = 2;
        private int dispatchQueueCapacity = 1024;
        private Duration writeStallTimeout;
        private int handshakeFrameBytes = DEFAULT_HANDSHAKE_FRAME_BYTES;
        private boolean directCompletions;
        private SSLContext tlsContext;
        private boolean requireClientCertificate;
        private int maxUnregisteredConnections = DEFAULT_MAX_UNREGISTERED_CONNECTIONS;
        /** Null until set: the default then follows a smaller total cap down. */
        private Integer maxUnregisteredPerAddress;

        private Builder() {
        }

        /**
         * The most connections waiting to register at once (default
         * {@value ServerOptions#DEFAULT_MAX_UNREGISTERED_CONNECTIONS}, at least 1); see
         * {@link ServerOptions#maxUnregisteredConnections()}. Raise it for a fleet larger than
         * that which must all reconnect in the same second; lower it to bound what
         * unauthenticated peers can cost more tightly.
         */
        public Builder maxUnregisteredConnections(int connections) {
            this.maxUnregisteredConnections = connections;
            return this;
        }

        /**
         * The most connections from one IP address waiting to register at once (default
         * {@value ServerOptions#DEFAULT_MAX_UNREGISTERED_PER_ADDRESS}, or the total cap when that
         * is smaller; at least 1, at most the total cap). Raise it when many workers share one
         * address (one large machine, a NAT gateway) and reconnect together.
         */
        public Builder maxUnregisteredPerAddress(int connections) {
            this.maxUnregisteredPerAddress = connections;
            return this;
        }

        /**
         * Serves TLS with this context (its key managers hold the coordinator's certificate).
         *
         * @param requireClientCertificate true for mutual TLS: workers must present a
         *                                 certificate the context's trust managers accept
         */
        public Builder tls(SSLContext context, boolean requireClientCertificate) {
            this.tlsContext = Objects.requireNonNull(context, "TLS context");
            this.requireClientCertificate = requireClientCertificate;
            return this;
        }

        /**
         * Serves TLS with the certificate chain and the PKCS#8 private key of these PEM files, and,
         * when {@code clientCa} is not null, mutual TLS: workers must present a certificate
         * issued by that CA (PEM).
         *
         * @throws IllegalArgumentException when a file is missing or unreadable, not PEM, or the
         *                                  key does not match the certificate; the message names
         *                                  the file
         */
        public Builder tls(Path certificateChain, Path privateKey, Path clientCa) {
            return tls(PemFiles.serverContext(certificateChain, privateKey, clientCa), clientCa != null);
        }

        /** Plaintext TCP (the default). */
        public Builder noTls() {
            this.tlsContext = null;
            this.requireClientCertificate = false;
            return this;
        }

        /**
         * Completes dispatch futures on the selector threads (default false); see
         * {@link ServerOptions#directCompletions()} for the promise that takes.
         */
        public Builder directCompletions(boolean direct) {
            this.directCompletions = direct;
            return this;
        }

        /** Unsent bytes waiting this long without progress close the connection (default: the heartbeat timeout). */
        public Builder writeStallTimeout(Duration timeout) {
            this.writeStallTimeout = Objects.requireNonNull(timeout, "writeStallTimeout");
            return this;
        }

        /** The frame limit until {@code register} succeeds (default 64 KiB, at least {@value #MIN_FRAME_BYTES}). */
        public Builder handshakeFrameBytes(int bytes) {
            this.handshakeFrameBytes = bytes;
            return this;
        }

        /** The address to listen on (default 127.0.0.1:7070); port 0 picks a free one. */
        public Builder bind(InetSocketAddress bind) {
            this.bind = Objects.requireNonNull(bind, "bind address");
            return this;
        }

        /** The shared secret workers must send; null (the default) accepts workers without one. */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /** The coordinator's heartbeat interval (default 5 s). */
        public Builder heartbeatInterval(Duration interval) {
            this.heartbeatInterval = Objects.requireNonNull(interval, "heartbeatInterval");
            return this;
        }

        /** Silence after which a worker is reaped (default 3 x the heartbeat interval). */
        public Builder heartbeatTimeout(Duration timeout) {
            this.heartbeatTimeout = Objects.requireNonNull(timeout, "heartbeatTimeout");
            return this;
        }

        /** Time a new connection has to send {@code register} (default 10 s). */
        public Builder handshakeTimeout(Duration timeout) {
            this.handshakeTimeout = Objects.requireNonNull(timeout, "handshakeTimeout");
            return this;
        }

        /** The frame limit in bytes (default 16 MiB, at least {@value #MIN_FRAME_BYTES}). */
        public Builder maxFrameBytes(int bytes) {
            this.maxFrameBytes = bytes;
            return this;
        }

        /** The largest capacity credited to one worker (default 1024). */
        public Builder maxCapacity(int capacity) {
            this.maxCapacity = capacity;
            return this;
        }

        /** Selector threads hosting all connections (default min(2, cores)). */
        public Builder selectorThreads(int threads) {
            this.selectorThreads = threads;
            return this;
        }

        /** Threads completing dispatch futures (default 2). */
        public Builder completionThreads(int threads) {
            this.completionThreads = threads;
            return this;
        }

        /** Dispatches that may wait per connection before {@code dispatch} blocks (default 1024). */
        public Builder dispatchQueueCapacity(int capacity) {
            this.dispatchQueueCapacity = capacity;
            return this;
        }

        /**
         * @return the validated options
         * @throws IllegalArgumentException naming the first option out of range and its value
         */
        public ServerOptions build() {
            if (token != null && token.isEmpty()) {
                throw new IllegalArgumentException(
                        "token must not be empty; pass null to accept workers without a token");
            }
            requireAtLeastOneMilli(heartbeatInterval, "heartbeatInterval");
            Duration timeout = heartbeatTimeout != null ? heartbeatTimeout : heartbeatInterval.multipliedBy(3);
            requireAtLeastOneMilli(timeout, "heartbeatTimeout");
            if (timeout.compareTo(heartbeatInterval) <= 0) {
                throw new IllegalArgumentException("heartbeatTimeout (" + timeout.toMillis()
                        + " ms) must be longer than heartbeatInterval (" + heartbeatInterval.toMillis()
                        + " ms), or healthy workers would be reaped; 3 x the interval is usual");
            }
            requireAtLeastOneMilli(handshakeTimeout, "handshakeTimeout");
            if (maxFrameBytes < MIN_FRAME_BYTES) {
                throw new IllegalArgumentException("maxFrameBytes must be at least " + MIN_FRAME_BYTES
                        + ", got " + maxFrameBytes);
            }
            requirePositive(maxCapacity, "maxCapacity");
            requirePositive(selectorThreads, "selectorThreads");
            requirePositive(completionThreads, "completionThreads");
            requirePositive(dispatchQueueCapacity, "dispatchQueueCapacity");
            Duration stall = writeStallTimeout != null ? writeStallTimeout : timeout;
            requireAtLeastOneMilli(stall, "writeStallTimeout");
            if (handshakeFrameBytes < MIN_FRAME_BYTES) {
                throw new IllegalArgumentException("handshakeFrameBytes must be at least " + MIN_FRAME_BYTES
                        + ", got " + handshakeFrameBytes);
            }
            requirePositive(maxUnregisteredConnections, "maxUnregisteredConnections");
            int perAddress;
            if (maxUnregisteredPerAddress == null) {
                perAddress = Math.min(DEFAULT_MAX_UNREGISTERED_PER_ADDRESS, maxUnregisteredConnections);
            } else {
                perAddress = maxUnregisteredPerAddress;
                requirePositive(perAddress, "maxUnregisteredPerAddress");
                if (perAddress > maxUnregisteredConnections) {
                    throw new IllegalArgumentException("maxUnregisteredPerAddress (" + perAddress
                            + ") must not exceed maxUnregisteredConnections (" + maxUnregisteredConnections
                            + "): one address can never have more waiting than all of them; raise"
                            + " maxUnregisteredConnections too, or lower maxUnregisteredPerAddress");
                }
            }
            return new ServerOptions(this, timeout, stall, perAddress);
        }

        private static void requireAtLeastOneMilli(Duration d, String name) {
            if (d.toMillis() < 1) {
                throw new IllegalArgumentException(name + " must be at least 1 ms, got " + d);
            }
        }

        private static void requirePositive(int value, String name) {
            if (value < 1) {
                throw new IllegalArgumentException(name + " must be at least 1, got " + value);
            }
        }
    }
}
