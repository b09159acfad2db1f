package dev.panoptes.eval;

import dev.panoptes.control.AsyncJobRunner;
import dev.panoptes.control.ControlException;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.JobRunner;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The eval workload: runs each vignette of a job's spec through a {@link ModelClient}, one call
 * after another in spec order, with the spec's parameters, and answers with exactly one
 * {@link ResponseRecord} per vignette (text, model, finish reason, latency, usage).
 *
 * <p><b>The vignette is the unit of failure.</b> When the model API refuses a vignette's request
 * for what it holds (the client fails with {@link FailureScope#JOB}: an HTTP 400 for a prompt
 * past the context length, 413, 422, a content filter), the same request would fail anywhere,
 * so the vignette gets a {@linkplain ResponseRecord#failed failed answer} carrying the client's
 * message (the status, the API's own message and code, the endpoint; never the key) and the
 * job goes on with the next vignette. Whose fault a failure is, is decided once, by the client
 * ({@link Retries#scopeOf} for HTTP answers); this class only acts on the scope.
 *
 * <p>Any other failure fails the whole job, and the vignettes after it are not sent. The job
 * fails as the vignette did, with the same {@link FailureScope}: a {@link WorkerFaultException}
 * when this worker is at fault (its model API's URL, key, model or server), a plain
 * {@link WorkerException} (retryable) when the client's own retries ran out or anything
 * unexpected happened. Either way the message names the job and the vignette, and the client's
 * exception is the cause.
 *
 * <p>Two ways to run a job: {@link #run} blocks the calling thread through the whole job (for
 * a {@link JobRunner} worker, one thread per job); {@link #start} returns at once and chains the
 * vignettes through {@link ModelClient#completeAsync}, each call starting from the completion of
 * the one before, on the client's own threads (for an {@link AsyncJobRunner} worker, no thread
 * per job). Both answer and fail alike.
 *
 * <p>Thread-safe when its client is, as {@link dev.panoptes.eval.http.HttpModelClient} is: a
 * worker runs several jobs through one runner at once.
 */
public final class EvalJobRunner implements JobRunner, AsyncJobRunner {
    private static final Logger log = LoggerFactory.getLogger(EvalJobRunner.class);

    private final ModelClient client;

    /** @param client the model client every vignette is sent through */
    public EvalJobRunner(ModelClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * Runs the job's vignettes in spec order.
     *
     * @return one record per vignette, in spec order; a failed answer for each vignette whose
     *         request the model API refused for what it holds
     * @throws WorkerFaultException naming the job and vignette, when this worker is at fault and
     *                              another may succeed
     * @throws WorkerException      naming the job and vignette, when a vignette failed for a reason
     *                              that may pass
     * @throws InterruptedException when the thread is interrupted, between or during calls
     */
    @Override
    public JobOutcome run(Job job) throws InterruptedException {
        Objects.requireNonNull(job, "job");
        EvalSpec spec = job.spec();
        List<Vignette> vignettes = spec.vignettes();
        List<ResponseRecord> records = new ArrayList<>(vignettes.size());
        for (int i = 0; i < vignettes.size(); i++) {
            Vignette v = vignettes.get(i);
            if (Thread.interrupted()) {
                throw new InterruptedException("job " + job.id() + " interrupted before vignette '" + v.id() + "'");
            }
            String where = where(job, i);
            ModelResponse r;
            long startNanos = System.nanoTime();
            try {
                r = client.complete(request(job, i));
            } catch (ControlException e) {
                if (e.scope() == FailureScope.JOB) {
                    records.add(failedAnswer(where, v, spec, startNanos, e));
                    continue;
                }
                throw rescoped(where, e);
            } catch (RuntimeException e) {
                throw new WorkerException(where + " failed unexpectedly: " + e, e);
            }
            if (r == null) {
                throw new WorkerException(where + ": the model client returned no response");
            }
            log.debug("{} answered by {} in {} ms", where, r.model(), r.latencyMs());
            records.add(new ResponseRecord(v.id(), r.text(), r.model(), r.finishReason(), r.latencyMs(),
                    r.usage()));
        }
        return new JobOutcome(job.id(), records);
    }

    /**
     * Starts the job's vignettes in spec order, each once the one before has answered, and
     * returns at once. Any thread; never blocks, provided the client's
     * {@link ModelClient#completeAsync} does not ({@link dev.panoptes.eval.http.HttpModelClient}'s
     * does not). Nothing runs on the common pool: the stages are chained without an executor, so
     * each vignette starts on the thread that completed the one before (the client's), and the
     * returned future completes there too.
     *
     * <p>Cancelling the returned future cancels the vignette's call in flight, which
     * {@link dev.panoptes.eval.http.HttpModelClient} aborts, and no further vignette is sent.
     *
     * @return completes with one record per vignette, in spec order; or exceptionally with a
     *         {@link WorkerFaultException} or {@link WorkerException} naming the job and
     *         vignette, exactly as {@link #run} throws them; a vignette the model API refused for
     *         what it holds gets a failed answer, as in {@link #run}
     */
    @Override
    public CompletableFuture<JobOutcome> start(Job job) {
        Objects.requireNonNull(job, "job");
        AsyncJob running = new AsyncJob(job);
        running.advance();
        return running;
    }

    /**
     * The request this runner sends for the job's vignette at {@code index}: the vignette's turns
     * (few-shot examples included) with the spec's parameters. A dry run shows exactly these.
     *
     * @throws IndexOutOfBoundsException when the job has no vignette at {@code index}
     */
    public static ModelRequest request(Job job, int index) {
        return ModelRequest.of(job.spec().vignettes().get(index), job.spec().params());
    }

    /** A job's place where a vignette failed, as messages name it. */
    private static String where(Job job, int index) {
        List<Vignette> vignettes = job.spec().vignettes();
        return "job " + job.id() + ": vignette '" + vignettes.get(index).id() + "' (" + (index + 1) + " of "
                + vignettes.size() + ")";
    }

    /**
     * The failed answer of a vignette whose request the model API refused for what it holds:
     * the client's message, which names the status, the API's message and the endpoint.
     */
    private static ResponseRecord failedAnswer(String where, Vignette v, EvalSpec spec, long startNanos,
                                               ControlException e) {
        long latencyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        String error = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
        log.warn("{}: the model API refused this vignette, stored as a failed answer, the job goes on: {}", where,
                error);
        return ResponseRecord.failed(v.id(), spec.params().model(), latencyMs, error);
    }

    /** The client's failure with the job and vignette in front, of the same scope. */
    private static ControlException rescoped(String where, ControlException e) {
        switch (e.scope()) {
            case WORKER:
                // The vignette says nothing about a worker's fault (any one would have failed), so
                // the cause comes first: it is what a quarantine line shows.
                return new WorkerFaultException(e.getMessage() + " (this worker's fault, met at " + where + ")", e);
            case JOB:
                return new JobFailedException(where + " failed permanently: " + e.getMessage(), e);
            default:
                return new WorkerException(where + " failed, may succeed if retried: " + e.getMessage(), e);
        }
    }

    /** A failure of the call for a vignette, without its CompletionException wrapper. */
    private static Throwable unwrapped(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** A failure of the call for a vignette, as the job fails with it. */
    private static ControlException translated(String where, Throwable failure) {
        Throwable t = unwrapped(failure);
        if (t instanceof ControlException e) {
            return rescoped(where, e);
        }
        if (t instanceof CancellationException) {
            return new WorkerException(where + ": the model call was cancelled", t);
        }
        return new WorkerException(where + " failed unexpectedly: " + t, t);
    }

    /** The client's count of 429 answers. */
    @Override
    public long throttledCount() {
        return client.throttledCount();
    }

    @Override
    public String toString() {
        return "EvalJobRunner[" + client + "]";
    }

    /**
     * One job started with {@link #start}: its records so far, and the call in flight. The
     * vignettes run one at a time, so only one thread at a time touches {@code records} and
     * {@code next}; the call in flight is read by whoever cancels.
     */
    private final class AsyncJob extends CompletableFuture<JobOutcome> {
        private final Job job;
        private final List<Vignette> vignettes;
        private final List<ResponseRecord> records;
        /** The next vignette to send. */
        private int next;
        /** The call in flight, for a cancel to abort. */
        private volatile CompletableFuture<ModelResponse> current;
        /** When the call in flight started, for a failed answer's latency. */
        private long startNanos;

        AsyncJob(Job job) {
            this.job = job;
            this.vignettes = job.spec().vignettes();
            this.records = new ArrayList<>(vignettes.size());
        }

        /**
         * Sends vignettes until one has not answered yet, whose completion calls this again. A
         * loop rather than a recursion, for clients whose futures are already complete.
         */
        void advance() {
            while (!isDone()) {
                if (next == vignettes.size()) {
                    complete(new JobOutcome(job.id(), records));
                    return;
                }
                int index = next;
                CompletableFuture<ModelResponse> call;
                startNanos = System.nanoTime();
                try {
                    call = client.completeAsync(request(job, index));
                } catch (RuntimeException e) {
                    // Thrown before any call: judged as a failed call would be.
                    if (!answered(index, null, e)) {
                        return;
                    }
                    continue;
                }
                if (call == null) {
                    completeExceptionally(new WorkerException(where(job, index)
                            + ": the model client returned no future"));
                    return;
                }
                current = call;
                if (isDone()) {
                    // Cancelled while the call started: it may not have seen the call to abort.
                    call.cancel(true);
                    return;
                }
                if (!call.isDone()) {
                    call.whenComplete((r, t) -> {
                        if (answered(index, r, t)) {
                            advance();
                        }
                    });
                    return;
                }
                Throwable failure = failureOf(call);
                if (!answered(index, failure == null ? call.getNow(null) : null, failure)) {
                    return;
                }
            }
        }

        /** Records a vignette's answer; false when the job is over (failed here, or cancelled). */
        private boolean answered(int index, ModelResponse r, Throwable failure) {
            current = null;
            if (isDone()) {
                return false;
            }
            String where = where(job, index);
            if (failure != null) {
                if (unwrapped(failure) instanceof ControlException e && e.scope() == FailureScope.JOB) {
                    records.add(failedAnswer(where, vignettes.get(index), job.spec(), startNanos, e));
                    next = index + 1;
                    return true;
                }
                completeExceptionally(translated(where, failure));
                return false;
            }
            if (r == null) {
                completeExceptionally(new WorkerException(where + ": the model client returned no response"));
                return false;
            }
            log.debug("{} answered by {} in {} ms", where, r.model(), r.latencyMs());
            records.add(new ResponseRecord(vignettes.get(index).id(), r.text(), r.model(), r.finishReason(),
                    r.latencyMs(), r.usage()));
            next = index + 1;
            return true;
        }

        /** Cancels the job and the vignette's call in flight. */
        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            CompletableFuture<ModelResponse> call = current;
            if (call != null) {
                call.cancel(mayInterruptIfRunning);
            }
            return cancelled;
        }
    }

    /** What a completed future failed with, or null when it succeeded. */
    private static Throwable failureOf(CompletableFuture<?> done) {
        try {
            done.join();
            return null;
        } catch (CompletionException e) {
            return e.getCause() == null ? e : e.getCause();
        } catch (CancellationException e) {
            return e;
        }
    }
}
