package dev.panoptes.remote;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;
import java.util.Arrays;

/**
 * What every connection of one server shares: its options in milliseconds, the codec, the
 * frames that never change, the handshake rules and the events it reports to the server.
 *
 * <p>Immutable and thread-safe; {@link #encodeAssign} is called on dispatching threads.
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
    }

    /**
     * A dispatching thread's encoder: a scratch buffer and a JSON generator bound to it, both
     * reused, so that an assign costs one exact-size array and no generator setup (making a
     * generator per job, with its buffer-recycler lookup and context, was most of the cost of
     * encoding a small job).
     */
    private static final class Encoder extends ByteArrayOutputStream {
        /** An encoder grown past this is dropped after use, so one huge job does not pin memory in a thread. */
        static final int RETAIN_BYTES = 64 * 1024;

        final JsonGenerator generator;

        Encoder(JsonFactory json) {
            super(1024);
            try {
                generator = json.createGenerator(this, JsonEncoding.UTF8);
            } catch (IOException e) {
                // An in-memory stream cannot fail to open.
                throw new UncheckedIOException(e);
            }
            // One frame per root value: no separator between them.
            generator.setRootValueSeparator(null);
        }

        byte[] frame() {
            int bodyBytes = bodyBytes();
            buf[0] = (byte) (bodyBytes >>> 24);
            buf[1] = (byte) (bodyBytes >>> 16);
            buf[2] = (byte) (bodyBytes >>> 8);
            buf[3] = (byte) bodyBytes;
            return Arrays.copyOf(buf, count);
        }

        int bodyBytes() {
            return count - MessageCodec.LENGTH_PREFIX_BYTES;
        }

        boolean oversized() {
            return buf.length > RETAIN_BYTES;
        }
    }

    private static final byte[] NO_PREFIX = new byte[MessageCodec.LENGTH_PREFIX_BYTES];

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
    private final JsonFactory json;
    /** Per dispatching thread; per server, since the codec (and its frame limit) is. */
    private final ThreadLocal<Encoder> encoders;

    ServerContext(ServerOptions options, Events events) {
        this.options = options;
        this.codec = new MessageCodec(options.maxFrameBytes());
        this.handshake = new Handshake(options.token(), options.maxCapacity());
        this.events = events;
        this.heartbeatIntervalMs = options.heartbeatInterval().toMillis();
        this.heartbeatTimeoutMs = options.heartbeatTimeout().toMillis();
        this.handshakeTimeoutMs = options.handshakeTimeout().toMillis();
        this.writeStallTimeoutMs = options.writeStallTimeout().toMillis();
        this.heartbeatFrame = codec.encodeFrame(Message.Heartbeat.COORDINATOR);
        this.registeredFrame = codec.encodeFrame(new Message.Registered(heartbeatIntervalMs));
        this.json = codec.mapper().getFactory();
        this.encoders = ThreadLocal.withInitial(() -> new Encoder(json));
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
        Encoder out = encoders.get();
        out.reset();
        out.write(NO_PREFIX, 0, NO_PREFIX.length);
        boolean clean = false;
        try {
            JsonGenerator g = out.generator;
            g.writeStartObject();
            g.writeStringField("type", "assign");
            g.writeFieldName("job");
            codec.writeJob(g, job);
            g.writeEndObject();
            g.flush();
            clean = true;
            if (out.bodyBytes() > options.maxFrameBytes()) {
                throw new JobFailedException("cannot send job " + job.id() + " to worker " + workerId
                        + ": its assign frame of " + out.bodyBytes() + " bytes exceeds the frame limit of "
                        + options.maxFrameBytes() + " bytes (maxFrameBytes); raise the limit on both sides or split"
                        + " the job");
            }
            return out.frame();
        } catch (IOException | RuntimeException | StackOverflowError e) {
            if (e instanceof JobFailedException failed) {
                throw failed;
            }
            // The same job fails the same way anywhere: it is the job's failure, and no one else's.
            throw new JobFailedException("cannot send job " + job.id() + " to worker " + workerId
                    + ": it cannot be encoded: " + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        } finally {
            // A generator that failed mid-object is in no state to write the next one.
            if (!clean || out.oversized()) {
                encoders.remove();
            }
        }
    }

    /** Encodes a rare frame (rejected, cancel) through the codec. */
    byte[] encodeFrame(Message message) {
        return codec.encodeFrame(message);
    }
}
