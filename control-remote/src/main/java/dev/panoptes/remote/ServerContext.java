package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.Usage;
import dev.panoptes.control.wire.FrameEncoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.Executor;

/**
 * What every connection of one server shares: its options in milliseconds, the codec, the
 * frames that never change, the handshake rules, the count of connections not registered yet
 * and the events it reports to the server.
 *
 * <p>Thread-safe (immutable but for the thread-safe count); {@link #encodeAssign} is called on
 * dispatching threads.
 */
final class ServerContext {
    /**
     * What a connection reports to its server, on the connection's selector thread. An
     * implementation must not block and should not throw (a throw is logged and ignored).
     * {@link #onLost} comes before the connection fails its jobs, so that a worker has left the
     * pool by the time anyone hears of the failures.
     */
    interface Events {
        /** The worker passed the handshake and can take jobs. */
        void onRegistered(RemoteWorker worker);

        /** A connection that never became a worker was refused or went away. */
        void onRejected(SocketAddress remote, String reason);

        /** The worker sent {@code drain}: it must get no new jobs. */
        void onDraining(RemoteWorker worker);

        /** A registered worker's connection is ending; its jobs are about to be failed. */
        void onLost(RemoteWorker worker, Throwable cause);

        /** The worker's model API answered {@code count} requests with HTTP 429 since it last said so. */
        default void onThrottled(RemoteWorker worker, long count) {
        }

        /**
         * An answer for {@code job} came after its attempt had ended (timed out, cancelled): its
         * model calls spent {@code usage}, which no stored record will show. Must not block.
         */
        default void onLateSpent(RemoteWorker worker, Job job, Usage usage) {
        }
    }

    final ServerOptions options;
    final MessageCodec codec;
    final Handshake handshake;
    final Events events;
    final long heartbeatIntervalMs;
    final long heartbeatTimeoutMs;
    final long handshakeTimeoutMs;
    final long writeStallTimeoutMs;
    final byte[] heartbeatFrame;
    final byte[] registeredFrame;
    /**
     * Where TLS handshakes run their delegated tasks (certificate checks, key agreement), off the
     * selector threads, in turns by peer address; null to run them inline (tests that drive a
     * loop by hand).
     */
    final HandshakeTasks tlsTasks;
    /** Failed TLS handshakes are logged at most once per ten seconds, with a count of the rest. */
    final LineBudget handshakeFailureLines = new LineBudget(10_000);
    /**
     * The connections that have not registered yet, against the caps of the options: the
     * acceptor counts each one in, its actor counts it out at registration or close.
     */
    final UnregisteredConnections unregistered;
    /**
     * Per dispatching thread: a reused buffer and JSON generator, since making a generator per job
     * was most of the cost of encoding a small one (measured: 25 % more coordinator CPU per job).
     */
    private final ThreadLocal<FrameEncoder> encoders;

    ServerContext(ServerOptions options, Events events) {
        this(options, events, null);
    }

    ServerContext(ServerOptions options, Events events, HandshakeTasks tlsTasks) {
        this.options = options;
        this.tlsTasks = tlsTasks;
        this.codec = new MessageCodec(options.maxFrameBytes());
        this.handshake = new Handshake(options.token(), options.maxCapacity());
        this.events = events;
        this.heartbeatIntervalMs = options.heartbeatInterval().toMillis();
        this.heartbeatTimeoutMs = options.heartbeatTimeout().toMillis();
        this.handshakeTimeoutMs = options.handshakeTimeout().toMillis();
        this.writeStallTimeoutMs = options.writeStallTimeout().toMillis();
        this.heartbeatFrame = codec.encodeFrame(Message.Heartbeat.COORDINATOR);
        this.registeredFrame = codec.encodeFrame(new Message.Registered(heartbeatIntervalMs,
                (long) options.maxFrameBytes()));
        this.encoders = ThreadLocal.withInitial(() -> new FrameEncoder(codec));
        this.unregistered = new UnregisteredConnections(options);
    }

    /**
     * The whole {@code assign} frame for {@code job}, length prefix included, exactly as
     * {@link MessageCodec#encodeFrame} would write it. Runs on the dispatching thread, so that a
     * job that cannot be encoded fails alone, before it reaches any connection.
     *
     * @param workerId the worker it is for, named in the exception
     * @throws JobFailedException when the job cannot be written as JSON (naming the vignette and
     *                            field) or its frame would exceed the frame limit
     */
    byte[] encodeAssign(Job job, String workerId) {
        FrameEncoder encoder = encoders.get();
        try {
            encoder.encode(new Message.Assign(job));
        } catch (IllegalArgumentException e) {
            // The same job fails the same way anywhere: it is the job's failure, and no one else's.
            throw new JobFailedException("cannot send job " + job.id() + " to worker " + workerId
                    + ": it cannot be encoded: " + e.getMessage(), e);
        }
        if (encoder.bodyLength() > options.maxFrameBytes()) {
            throw new JobFailedException("cannot send job " + job.id() + " to worker " + workerId
                    + ": its assign frame of " + encoder.bodyLength() + " bytes exceeds the frame limit of "
                    + options.maxFrameBytes() + " bytes (maxFrameBytes); raise the limit on both sides or split the"
                    + " job");
        }
        return encoder.toFrame();
    }

    /**
     * The executor for the TLS handshake tasks of a connection from {@code remote}: its turn is
     * its address's. Null when tasks run inline.
     */
    Executor tlsTasksFor(SocketAddress remote) {
        if (tlsTasks == null) {
            return null;
        }
        return tlsTasks.forPeer(remote instanceof InetSocketAddress inet ? inet.getAddress() : null);
    }

    /** Encodes a rare frame (rejected, cancel) through the codec. */
    byte[] encodeFrame(Message message) {
        return codec.encodeFrame(message);
    }
}
