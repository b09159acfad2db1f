package dev.panoptes.eval;

import dev.panoptes.control.DaemonThreads;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.eval.agent.SandboxedSample;
import dev.panoptes.eval.sandbox.Sandboxes;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Runs the samples of vignettes that declare a sandbox on threads of their own
 * ({@code sandbox-sample-<n>}), never on the caller's: a worker's session and the model client's
 * I/O threads only start them and are handed the answer. How many run at once is bounded by the
 * worker's {@link Sandboxes} slots ({@code --sandboxes}); a sample waiting for a slot waits on
 * its own thread. Cancelling a sample's future interrupts its thread, which aborts its model call
 * and closes its sandbox.
 *
 * <p>Thread-safe; {@link #close} stops the threads.
 */
public final class SandboxCalls implements AutoCloseable {
    private final SandboxedSample sample;
    private final ExecutorService threads = Executors.newCachedThreadPool(DaemonThreads.numbered("sandbox-sample"));

    /**
     * @param client    the model client the samples' turns go through
     * @param sandboxes the worker's sandboxes, or null when it runs none (each sandboxed vignette
     *                  then fails as this worker's fault)
     */
    public SandboxCalls(ModelClient client, Sandboxes sandboxes) {
        this.sample = new SandboxedSample(client, sandboxes);
    }

    /**
     * Starts the vignette's sample; returns at once. Any thread.
     *
     * @return completes with the answer and its transcript, or exceptionally as
     *         {@link SandboxedSample#run} throws
     */
    public CompletableFuture<ModelResponse> start(Vignette v, SpecParams params) {
        Running running = new Running();
        try {
            threads.execute(() -> running.run(v, params));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            running.completeExceptionally(new dev.panoptes.control.WorkerException("the worker is stopping: sample '"
                    + v.id() + "' was not started", e));
        }
        return running;
    }

    /** Runs the vignette on the calling thread; see {@link SandboxedSample#run}. */
    public ModelResponse run(Vignette v, SpecParams params) throws InterruptedException {
        return sample.run(v, params);
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }

    /** A sample's future, whose cancellation interrupts the thread running it. */
    private final class Running extends CompletableFuture<ModelResponse> {
        private Thread thread;

        void run(Vignette v, SpecParams params) {
            synchronized (this) {
                if (isDone()) {
                    return;
                }
                thread = Thread.currentThread();
            }
            try {
                complete(sample.run(v, params));
            } catch (Throwable t) {
                completeExceptionally(t);
            } finally {
                synchronized (this) {
                    thread = null;
                }
                // A cancel's interrupt may land after the sample ended: not this thread's next task's.
                Thread.interrupted();
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            synchronized (this) {
                if (thread != null) {
                    thread.interrupt();
                }
            }
            return cancelled;
        }
    }
}
