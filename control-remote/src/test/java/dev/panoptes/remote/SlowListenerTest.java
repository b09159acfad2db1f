package dev.panoptes.remote;

import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageStream;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static dev.panoptes.remote.TestCoordinator.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server listener that blocks delays only itself: what waits for it stays bounded however
 * much happens meanwhile, and what it is told adds up.
 */
class SlowListenerTest {

    @Test
    void aBlockedListenerHoldsBoundedRejectionReportsAndOneThrottledReportPerWorker() throws Exception {
        CountDownLatch unblock = new CountDownLatch(1);
        AtomicInteger rejections = new AtomicInteger();
        AtomicLong throttled = new AtomicLong();
        AtomicInteger throttledCalls = new AtomicInteger();
        AtomicInteger registrations = new AtomicInteger();
        WorkerServer.Listener listener = new WorkerServer.Listener() {
            @Override
            public void onRegistered(RemoteWorker worker) {
                registrations.incrementAndGet();
                try {
                    unblock.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void onRejected(SocketAddress remote, String reason) {
                rejections.incrementAndGet();
            }

            @Override
            public void onThrottled(RemoteWorker worker, long count) {
                throttledCalls.incrementAndGet();
                throttled.addAndGet(count);
            }
        };
        SharedPool pool = new SharedPool();
        ServerOptions options = ServerOptions.builder().bind(new InetSocketAddress("127.0.0.1", 0)).build();
        try (WorkerServer server = WorkerServer.start(options, pool, listener);
             FakeWorker fake = FakeWorker.register(server.address(), "w1", 1)) {
            eventually().until(() -> registrations.get() == 1); // the listener now blocks
            int peers = WorkerServer.MAX_WAITING_REJECTIONS + 300;
            for (int i = 0; i < peers; i++) {
                try (Socket s = new Socket("127.0.0.1", server.address().getPort())) {
                    // Not a register: rejected at once, with a report for the listener.
                    new MessageStream(s).send(new Message.Heartbeat("nobody"));
                    s.getInputStream().read();
                }
            }
            for (int i = 0; i < 500; i++) {
                fake.send(new Message.Throttled(2));
            }
            fake.send(new Message.Heartbeat("w1"));
            eventually().until(() -> pool.size() == 1 && server.unregisteredConnections() == 0);
            // Every throttled frame read while the listener still blocks, so that they all wait
            // for it in one report: a frame read after it is free is a report of its own.
            RemoteWorker worker = (RemoteWorker) pool.snapshot().get(0);
            eventually().until(() -> worker.throttledUntold.get() == 1_000);

            unblock.countDown();

            eventually().until(() -> throttled.get() == 1_000);
            assertThat(throttledCalls.get()).as("calls that carried the 1,000 throttled answers").isLessThanOrEqualTo(2);
            eventually().until(() -> rejections.get() >= WorkerServer.MAX_WAITING_REJECTIONS);
            assertThat(rejections.get()).as("reports told, of %d rejected peers", peers)
                    .isEqualTo(WorkerServer.MAX_WAITING_REJECTIONS);
        }
    }
}
