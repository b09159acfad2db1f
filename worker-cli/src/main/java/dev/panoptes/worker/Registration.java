package dev.panoptes.worker;

import dev.panoptes.control.wire.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * A session's registration handshake (PROTOCOL.md): {@code register} as the first frame, then
 * {@code registered}, whose heartbeat interval and frame limit this worker adopts, or
 * {@code rejected}, which ends the session with a {@link RegistrationRejectedException}.
 *
 * <p><b>Threads.</b> {@link #start} and the {@code on...} methods run on the session's I/O thread;
 * {@link #sent()} and {@link #accepted()} may be read from any thread.
 *
 * <p><b>Promises.</b> Any frame other than {@code rejected} (a {@code registered}, a heartbeat, an
 * assignment) counts as acceptance: the reconnect loop resets its backoff after such a session.
 */
final class Registration {
    private static final Logger log = LoggerFactory.getLogger(WorkerSession.class);

    private final String workerId;
    private final int capacity;
    private final WorkerOptions options;
    private final String coordinator;
    private final SessionTransport transport;
    private final Heartbeats heartbeats;
    private volatile boolean sent;
    private volatile boolean accepted;

    Registration(String workerId, int capacity, WorkerOptions options, String coordinator,
                 SessionTransport transport, Heartbeats heartbeats) {
        this.workerId = workerId;
        this.capacity = capacity;
        this.options = options;
        this.coordinator = coordinator;
        this.transport = transport;
        this.heartbeats = heartbeats;
    }

    /** Sends {@code register}, the session's first frame. */
    void start(long now) throws IOException {
        transport.send(new Message.Register(workerId, capacity, Message.PROTOCOL_VERSION, options.token(),
                options.labels(), options.models()));
        heartbeats.sent(now);
        sent = true;
        log.info("worker={} - connected to coordinator {}; registering with capacity {}",
                workerId, coordinator, capacity);
    }

    /**
     * Every frame from the coordinator passes here first.
     *
     * @throws RegistrationRejectedException when it is {@code rejected}
     */
    void onFrame(Message message) {
        if (message instanceof Message.Rejected rejected) {
            throw new RegistrationRejectedException(coordinator, workerId, rejected.reason(), rejected.retryable());
        }
        accepted = true;
    }

    /** Adopts the coordinator's heartbeat interval and, when smaller than ours, its frame limit. */
    void onRegistered(Message.Registered registered) {
        log.info("worker={} - registered with coordinator {} (its heartbeat interval: {}ms)",
                workerId, coordinator, registered.heartbeatMs());
        heartbeats.matchCoordinator(registered.heartbeatMs());
        Long coordinatorLimit = registered.maxFrameBytes();
        if (coordinatorLimit != null && coordinatorLimit > 0 && coordinatorLimit < transport.sendLimit()) {
            transport.lowerSendLimit(coordinatorLimit);
            log.info("worker={} - coordinator {} accepts frames of up to {} bytes; this worker's limit is {}"
                    + " (--max-frame-bytes): answers bigger than {} bytes fail their job", workerId, coordinator,
                    transport.sendLimit(), options.maxFrameBytes(), transport.sendLimit());
        }
    }

    /** True once {@code register} has been sent. Any thread. */
    boolean sent() {
        return sent;
    }

    /** True once the coordinator sent anything but {@code rejected}. Any thread. */
    boolean accepted() {
        return accepted;
    }
}
