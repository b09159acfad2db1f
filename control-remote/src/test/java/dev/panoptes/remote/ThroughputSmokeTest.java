package dev.panoptes.remote;

import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.TestJobs;
import dev.panoptes.control.wire.Message;
import dev.panoptes.control.wire.MessageCodec;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rough figure, not a benchmark (a later issue has those): jobs per second through one
 * connection at 64 in flight, against a fake worker that answers from raw bytes so that it is
 * not the bottleneck. Asserts only that every job is answered correctly; prints the rate.
 */
class ThroughputSmokeTest {
    private static final int IN_FLIGHT = 64;
    private static final int JOBS = 60_000;

    @Test
    void measuresJobsPerSecondThroughOneConnectionAt64InFlight() throws Exception {
        try (TestCoordinator coordinator = TestCoordinator.start(b -> b.maxCapacity(IN_FLIGHT));
             Socket socket = new Socket("127.0.0.1", coordinator.address().getPort())) {
            socket.setTcpNoDelay(true);
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
            out.write(new MessageCodec().encodeFrame(new Message.Register("fast", IN_FLIGHT)));
            out.flush();
            AtomicReference<Throwable> workerFailure = new AtomicReference<>();
            Thread worker = new Thread(() -> answerFromRawBytes(socket, out, workerFailure), "fast-fake-worker");
            worker.setDaemon(true);
            worker.start();
            RemoteWorker remote = coordinator.awaitWorker("fast");

            List<Job> jobs = TestJobs.jobs("t", JOBS);
            Semaphore slots = new Semaphore(IN_FLIGHT);
            AtomicInteger answered = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long startNs = System.nanoTime();
            for (Job job : jobs) {
                slots.acquire();
                CompletableFuture<JobOutcome> reply = remote.dispatch(job);
                reply.whenComplete((outcome, error) -> {
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    } else if (outcome.jobId().equals(job.id())) {
                        answered.incrementAndGet();
                    }
                    slots.release();
                });
            }
            assertThat(slots.tryAcquire(IN_FLIGHT, 30, TimeUnit.SECONDS)).isTrue();
            long elapsedNs = System.nanoTime() - startNs;

            assertThat(failure.get()).isNull();
            assertThat(workerFailure.get()).isNull();
            assertThat(answered.get()).isEqualTo(JOBS);
            System.out.printf("MEASURED throughput: %d jobs through one connection at %d in flight in %d ms:"
                    + " %.0f jobs/s%n", JOBS, IN_FLIGHT, TimeUnit.NANOSECONDS.toMillis(elapsedNs),
                    JOBS / (elapsedNs / 1e9));
        }
    }

    /** Answers each assign with a one-record result, finding the job id by scanning bytes; flushes when idle. */
    private static void answerFromRawBytes(Socket socket, OutputStream out, AtomicReference<Throwable> failure) {
        byte[] idKey = "\"job\":{\"id\":\"".getBytes(StandardCharsets.UTF_8);
        try {
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
            byte[] body = new byte[64 * 1024];
            while (true) {
                int length;
                try {
                    length = in.readInt();
                } catch (EOFException e) {
                    return;
                }
                if (length > body.length) {
                    body = new byte[length];
                }
                in.readFully(body, 0, length);
                int at = indexOf(body, length, idKey);
                if (at >= 0) { // else registered or a heartbeat
                    int idStart = at + idKey.length;
                    int idEnd = idStart;
                    while (body[idEnd] != '"') {
                        idEnd++;
                    }
                    String id = new String(body, idStart, idEnd - idStart, StandardCharsets.UTF_8);
                    byte[] result = ("{\"type\":\"result\",\"outcome\":{\"jobId\":\"" + id
                            + "\",\"records\":[{\"vignetteId\":\"v0\",\"response\":\"ok\"}]}}")
                            .getBytes(StandardCharsets.UTF_8);
                    out.write(new byte[] {(byte) (result.length >>> 24), (byte) (result.length >>> 16),
                            (byte) (result.length >>> 8), (byte) result.length});
                    out.write(result);
                }
                // Flushed whenever it has read all there is, whatever the last frame was: after a
                // heartbeat too. It used to skip the flush after one, so that when the coordinator,
                // its 64 jobs all answered in this buffer, fell silent for a heartbeat interval and
                // the heartbeat was the last frame read, the answers stayed here while this thread
                // waited to read (and each later heartbeat skipped the flush again) until the
                // coordinator dropped the worker at its 30 s heartbeat timeout, "64 pending".
                if (in.available() == 0) {
                    out.flush();
                }
            }
        } catch (IOException e) {
            if (!socket.isClosed()) {
                failure.set(e);
            }
        }
    }

    private static int indexOf(byte[] haystack, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
