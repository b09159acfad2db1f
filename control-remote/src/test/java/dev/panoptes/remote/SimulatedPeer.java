package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.wire.FrameDecoder;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A worker as a {@link ScheduleSimulation} plays it: a real loopback socket that sends exactly
 * the frames the simulation tells it to, and reads exactly the bytes the coordinator's actor has
 * written (it knows how many), so that nothing depends on when loopback delivers.
 *
 * <p>Driven by the simulation's one thread.
 */
final class SimulatedPeer implements Closeable {
    private static final MessageCodec CODEC = new MessageCodec();

    final String workerId;
    final int capacity;
    final int serial;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final FrameDecoder decoder = new FrameDecoder(CODEC);
    private final byte[] buffer = new byte[64 * 1024];
    /** Jobs assigned to it and not answered by it yet, in the order they arrived. */
    final Map<JobId, Job> held = new LinkedHashMap<>();
    /** Jobs the coordinator told it to stop; they stay held until answered. */
    final Set<JobId> cancelled = new LinkedHashSet<>();
    /** Jobs it answered, for late and duplicate answers. */
    final List<Job> answered = new ArrayList<>();
    private long written;
    private long read;
    RemoteWorker worker;
    boolean draining;
    boolean closedByPeer;

    private SimulatedPeer(String workerId, int capacity, int serial, Socket socket) throws IOException {
        this.workerId = workerId;
        this.capacity = capacity;
        this.serial = serial;
        this.socket = socket;
        socket.setTcpNoDelay(true);
        // Only ever reads bytes it knows are there: a timeout here is a broken test, not a slow one.
        socket.setSoTimeout(10_000);
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    static SimulatedPeer connect(InetSocketAddress coordinator, String workerId, int capacity, int serial)
            throws IOException {
        Socket socket = new Socket();
        socket.connect(coordinator, 10_000);
        return new SimulatedPeer(workerId, capacity, serial, socket);
    }

    /** The address the coordinator sees for this peer. */
    SocketAddress localAddress() {
        return socket.getLocalSocketAddress();
    }

    ConnectionActor actor() {
        return worker == null ? null : worker.actor();
    }

    /** Sends the frames in one write, as one segment on loopback. */
    void send(Message... messages) throws IOException {
        ByteArrayOutputStream frames = new ByteArrayOutputStream();
        for (Message m : messages) {
            frames.write(CODEC.encodeFrame(m));
        }
        out.write(frames.toByteArray());
        out.flush();
        written += frames.size();
    }

    long written() {
        return written;
    }

    /** Reads every byte the coordinator has written to this peer so far, and acts on each frame. */
    void catchUp() throws IOException {
        ConnectionActor actor = actor();
        if (actor == null) {
            return;
        }
        long target = actor.bytesWritten();
        while (read < target) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, target - read));
            if (n < 0) {
                throw new IOException("peer " + this + " hit the end of its stream with " + (target - read)
                        + " bytes the coordinator wrote still unread");
            }
            read += n;
            decoder.feed(ByteBuffer.wrap(buffer, 0, n), this::onMessage);
        }
    }

    private void onMessage(Message m) {
        if (m instanceof Message.Assign assign) {
            Job job = assign.job();
            if (held.putIfAbsent(job.id(), job) != null) {
                throw new AssertionError("peer " + this + " was assigned job " + job.id()
                        + " while it still held it: two attempts of one job on one connection");
            }
        } else if (m instanceof Message.Cancel cancel && held.containsKey(cancel.jobId())) {
            // A cancel for a job it answered already crossed that answer: nothing to do.
            cancelled.add(cancel.jobId());
        }
    }

    /** Forgets a job it answers now. */
    Job take(JobId id) {
        Job job = held.remove(id);
        cancelled.remove(id);
        answered.add(job);
        return job;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    @Override
    public String toString() {
        return workerId + "#" + serial;
    }
}
