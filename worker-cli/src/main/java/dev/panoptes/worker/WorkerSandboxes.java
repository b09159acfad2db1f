package dev.panoptes.worker;

import dev.panoptes.eval.sandbox.SandboxLimits;
import dev.panoptes.eval.sandbox.Sandboxes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * A worker's start-up check of its sandboxes (--sandboxes): builds one, runs a command in it,
 * and logs one line saying whether this worker can run sandboxes. Fails closed: a worker that
 * cannot gets no {@link Sandboxes}, so it never runs a command outside one.
 */
final class WorkerSandboxes {
    private static final Logger log = LoggerFactory.getLogger(WorkerSandboxes.class);

    private WorkerSandboxes() {
    }

    /**
     * Checks, on the calling thread.
     *
     * @param slots sandboxes at once; 0 for none, and then nothing is checked
     * @param path  where to look for bubblewrap, as {@code PATH} lists folders
     * @return the sandboxes, which the caller closes; null when {@code slots} is 0 or this
     *         machine cannot build one (the line logged at WARN says why and what to do)
     * @throws InterruptedException when the calling thread is interrupted
     */
    static Sandboxes check(String workerId, int slots, String path) throws InterruptedException {
        if (slots == 0) {
            return null;
        }
        Sandboxes sandboxes = Sandboxes.onPath(path, SandboxLimits.defaults(), slots);
        long start = System.nanoTime();
        String problem = sandboxes.check();
        if (problem != null) {
            sandboxes.close();
            log.warn("worker={} - cannot run sandboxes, so runs no sandboxed command: {}", workerId, problem);
            return null;
        }
        log.info("worker={} - sandboxes: up to {} at once (bubblewrap; one started and ran a command in {} ms)",
                workerId, slots, (System.nanoTime() - start) / 1_000_000);
        return sandboxes;
    }

    /**
     * Starts {@link #check} on a thread of its own ({@code worker-sandbox-check}), so that the
     * bubblewrap run (~0.3 s) overlaps the model client's start and the model API check instead
     * of coming before them. With {@code slots} 0 no thread starts and the result is null at once.
     *
     * @return the running check, which the caller {@link Pending#close() closes}
     */
    static Pending start(String workerId, int slots, String path) {
        return new Pending(workerId, slots, path);
    }

    /**
     * A check under way. {@link #await()} from one thread (the worker's main thread) and
     * {@link #close()} from the same; the check runs on its own thread.
     */
    static final class Pending implements AutoCloseable {
        private final String workerId;
        private final FutureTask<Sandboxes> task;

        private Pending(String workerId, int slots, String path) {
            this.workerId = workerId;
            this.task = new FutureTask<>(() -> check(workerId, slots, path));
            if (slots == 0) {
                task.run(); // nothing to check: no thread for it
            } else {
                Thread thread = new Thread(task, "worker-sandbox-check");
                thread.setDaemon(true);
                thread.start();
            }
        }

        /**
         * Waits for the check's answer.
         *
         * @return the sandboxes (owned by this object: {@link #close()} closes them), or null when
         *         the worker has none: --sandboxes 0, the check found this machine cannot build one,
         *         or the check itself failed (then logged at WARN here: fail closed)
         * @throws InterruptedException when the calling thread is interrupted while waiting
         */
        Sandboxes await() throws InterruptedException {
            try {
                return task.get();
            } catch (ExecutionException e) {
                log.warn("worker={} - cannot run sandboxes, so runs no sandboxed command: the sandbox check failed: {}",
                        workerId, e.getCause().toString(), e.getCause());
                return null;
            } catch (CancellationException e) {
                return null;
            }
        }

        /**
         * Waits for the check to end (so that its line is logged before the worker's last, and no
         * bubblewrap process outlives the worker's start), then closes the sandboxes it built, if
         * any. Interrupted, it stops the check and returns at once, the thread's interrupt kept.
         */
        @Override
        public void close() {
            try {
                Sandboxes sandboxes = await();
                if (sandboxes != null) {
                    sandboxes.close();
                }
            } catch (InterruptedException e) {
                task.cancel(true);
                Thread.currentThread().interrupt();
            }
        }
    }
}
