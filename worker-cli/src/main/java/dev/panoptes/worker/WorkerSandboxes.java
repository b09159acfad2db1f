package dev.panoptes.worker;

import dev.panoptes.eval.sandbox.SandboxLimits;
import dev.panoptes.eval.sandbox.Sandboxes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
     * Checks, on the calling thread (the worker's main thread, before it registers).
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
}
