package dev.panoptes.remote;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.panoptes.control.Job;
import dev.panoptes.control.ProtocolException;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;

/**
 * What every connection of one server shares: its options in milliseconds, the codec, the
 * frames that never change, the handshake rules and the events it reports to the server.
 *
 * <p>Immutable and thread-safe; {@link #encodeAssign} may be called by any selector thread.
 */
final class ServerContext {
    /**
     * What a connection reports to its server. Called on the connection's selector thread; an
     * implementation must not block and should not throw (a throw is logged and ignored).
     */
    interface Events {
        /** The worker passed the handshake and can take jobs. */
        void onRegistered(RemoteWorker worker);

        /** A connection that never became a worker was refused or went away. */
        void onRejected(SocketAddress remote, String reason);

        /** The worker sent {@code drain}: it must get no new jobs. */
        void onDraining(RemoteWorker worker);

        /** A registered worker's connection ended; its jobs have been failed. */
        void onLost(RemoteWorker worker, Throwable cause);
    }

    final ServerOptions options;
    final MessageCodec codec;
    final Handshake handshake;
    final Events events;
    final long heartbeatIntervalMs;
    final long heartbeatTimeoutMs;
    final long handshakeTimeoutMs;
    final byte[] heartbeatFrame;
    final byte[] registeredFrame;
    private final JsonFactory json;

    ServerContext(ServerOptions options, Events events) {
        this.options = options;
        this.codec = new MessageCodec(options.maxFrameBytes());
        this.handshake = new Handshake(options.token(), options.maxCapacity());
        this.events = events;
        this.heartbeatIntervalMs = options.heartbeatInterval().toMillis();
        this.heartbeatTimeoutMs = options.heartbeatTimeout().toMillis();
        this.handshakeTimeoutMs = options.handshakeTimeout().toMillis();
        this.heartbeatFrame = codec.encodeFrame(Message.Heartbeat.COORDINATOR);
        this.registeredFrame = codec.encodeFrame(new Message.Registered(heartbeatIntervalMs));
        this.json = codec.mapper().getFactory();
    }

    /**
     * Encodes an {@code assign} frame for {@code job} straight into {@code out}, exactly as
     * {@link MessageCodec#encodeFrame} would, without an intermediate array.
     *
     * @throws ProtocolException when the frame would exceed the frame limit; nothing is appended
     */
    void encodeAssign(Job job, OutboundBuffer out) {
        out.beginFrame();
        try (JsonGenerator g = json.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("type", "assign");
            g.writeFieldName("job");
            codec.writeJob(g, job);
            g.writeEndObject();
        } catch (IOException e) {
            out.abortFrame();
            // OutboundBuffer never throws IOException; Jackson declares it anyway.
            throw new UncheckedIOException("could not encode job " + job.id(), e);
        } catch (RuntimeException e) {
            out.abortFrame();
            throw e;
        }
        out.endFrame(options.maxFrameBytes(), job.id());
    }

    /** Encodes a rare frame (rejected) through the codec. */
    byte[] encodeFrame(Message message) {
        return codec.encodeFrame(message);
    }
}
