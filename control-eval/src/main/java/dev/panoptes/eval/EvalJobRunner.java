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
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.eval.agent.SandboxSetupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The eval workload: runs each vignette of a job's spec through a {@link ModelClient}, with the
 * spec's parameters, and answers with exactly one
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
 * <p>Any other failure fails the whole job: the vignettes not yet sent are not sent, and the
 * calls still in flight are cancelled. The job
 * fails as the vignette did, with the same {@link FailureScope}: a {@link WorkerFaultException}
 * when this worker is at fault (its model API's URL, key, model or server), a plain
 * {@link WorkerException} (retryable) when the client's own retries ran out or anything
 * unexpected happened. Either way the message names the job and the vignette, and the client's
 * exception is the cause.
 *
 * <p>Two ways to run a job: {@link #run} blocks the calling thread through the whole job (for
 * a {@link JobRunner} worker, one thread per job), one call after another in spec order;
 * {@link #start} returns at once and sends the vignettes through {@link ModelClient#completeAsync}
 * on the client's own threads (for an {@link AsyncJobRunner} worker, no thread per job or per
 * request): one at a time, or, with {@link RequestPermits}, as many at once as the worker's
 * budget of requests in flight allows, shared by all the jobs it holds. Both answer and fail
 * alike, and the records are in spec order either way.
 *
 * <p>Thread-safe when its client is, as {@link dev.panoptes.eval.http.HttpModelClient} is: a
 * worker runs several jobs through one runner at once.
 */
public final class EvalJobRunner implements JobRunner, AsyncJobRunner {
    private static final Logger log = LoggerFactory.getLogger(EvalJobRunner.class);

    /** Job starts, in order, so that the jobs started first get the permits first. */
    private final AtomicLong starts = new AtomicLong();

    private final ModelClient client;
    /** The worker's budget of requests in flight, or null for one vignette at a time per job. */
    private final RequestPermits permits;
    /** Runs the vignettes that declare a sandbox. */
    private final SandboxCalls sandboxed;

    /**
     * A runner whose started jobs each send one vignette at a time.
     *
     * @param client the model client every vignette is sent through
     */
    public EvalJobRunner(ModelClient client) {
        this.client = Objects.requireNonNull(client, "client");
        this.permits = null;
        this.sandboxed = new SandboxCalls(client, null);
    }

    /**
     * A runner whose started jobs send their vignettes concurrently, within one budget of
     * requests in flight shared by every job it runs: what a worker whose knob is
     * {@code --requests} runs.
     *
     * @param client  the model client every vignette is sent through; give it at least
     *                {@code permits.permits()} connections, or calls wait for one
     * @param permits the worker's requests in flight, shared by all its jobs
     */
    public EvalJobRunner(ModelClient client, RequestPermits permits) {
        this(client, permits, new SandboxCalls(client, null));
    }

    /**
     * A runner as {@link #EvalJobRunner(ModelClient, RequestPermits)}, whose vignettes that declare
     * a sandbox run through {@code sandboxed} (on its threads, each holding a request permit for
     * the whole sample). The caller closes {@code sandboxed}.
     */
    public EvalJobRunner(ModelClient client, RequestPermits permits, SandboxCalls sandboxed) {
        this.client = Objects.requireNonNull(client, "client");
        this.permits = Objects.requireNonNull(permits, "permits");
        this.sandboxed = Objects.requireNonNull(sandboxed, "sandboxed");
    }

    /** The budget of requests in flight that started jobs share, or null when each job sends one at a time. */
    public RequestPermits permits() {
        return permits;
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
        // What the answered calls cost: a failure of the job carries it (ControlException#spent),
        // so that tokens paid for answers that will not be stored are still counted.
        Usage spent = Usage.ZERO;
        for (int i = 0; i < vignettes.size(); i++) {
            Vignette v = vignettes.get(i);
            if (Thread.interrupted()) {
                throw new InterruptedException("job " + job.id() + " interrupted before vignette '" + v.id() + "'");
            }
            String where = where(job, i);
            ModelResponse r;
            long startNanos = System.nanoTime();
            try {
                r = v.isMultipleChoice() ? loglikelihood(job, i)
                        : v.usesSandbox() ? sandboxed.run(v, spec.params()) : client.complete(request(job, i));
            } catch (ControlException e) {
                if (e.scope() == FailureScope.JOB) {
                    records.add(failedAnswer(where, v, spec, startNanos, e));
                    continue;
                }
                throw rescoped(where, e).addSpent(spent);
            } catch (RuntimeException e) {
                throw new WorkerException(where + " failed unexpectedly: " + e, e).addSpent(spent);
            }
            if (r == null) {
                throw new WorkerException(where + ": the model client returned no response").addSpent(spent);
            }
            log.debug("{} answered by {} in {} ms", where, r.model(), r.latencyMs());
            ResponseRecord record = r.record(v.id());
            if (record.usage() != null) {
                spent = spent.plus(record.usage());
            }
            records.add(record);
        }
        return new JobOutcome(job.id(), records);
    }

    /**
     * Starts the job's vignettes in spec order and returns at once: without
     * {@link RequestPermits}, each once the one before has answered; with them, each as soon as
     * a permit is free, the jobs started first served first. Any thread; never blocks, provided
     * the client's {@link ModelClient#completeAsync} does not
     * ({@link dev.panoptes.eval.http.HttpModelClient}'s does not). Nothing runs on the common
     * pool: a vignette starts on the thread that freed its permit (the starter's, or the
     * client's), and the returned future completes on the client's threads.
     *
     * <p>Cancelling the returned future cancels the calls in flight, which
     * {@link dev.panoptes.eval.http.HttpModelClient} aborts, no further vignette is sent, and
     * every permit the job held goes back.
     *
     * @return completes with one record per vignette, in spec order; or exceptionally with a
     *         {@link WorkerFaultException} or {@link WorkerException} naming the job and
     *         vignette, exactly as {@link #run} throws them; a vignette the model API refused for
     *         what it holds gets a failed answer, as in {@link #run}
     */
    @Override
    public CompletableFuture<JobOutcome> start(Job job) {
        Objects.requireNonNull(job, "job");
        StartedJob started = new StartedJob(client, sandboxed, permits != null ? permits : new RequestPermits(1),
                starts.getAndIncrement(), job);
        started.pump();
        return started;
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

    /**
     * Starts the call for the job's vignette at {@code index}: a log-likelihood request for a
     * multiple-choice vignette, a sample on a thread of {@code sandboxed} for a vignette that
     * declares a sandbox, else a chat completion. Never blocks.
     */
    static CompletableFuture<ModelResponse> call(ModelClient client, SandboxCalls sandboxed, Job job, int index) {
        Vignette v = job.spec().vignettes().get(index);
        if (v.usesSandbox()) {
            return sandboxed.start(v, job.spec().params());
        }
        return v.isMultipleChoice() ? client.loglikelihoodAsync(LoglikelihoodRequest.of(v, job.spec().params()))
                : client.completeAsync(request(job, index));
    }

    /** A multiple-choice vignette's log-likelihoods, waited for; fails as {@link ModelClient#complete} does. */
    private ModelResponse loglikelihood(Job job, int index) throws InterruptedException {
        CompletableFuture<ModelResponse> call = call(client, sandboxed, job, index);
        try {
            return call.get();
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable t = e.getCause();
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw new WorkerException("the model call failed unexpectedly: " + t, t);
        }
    }

    /** A job's place where a vignette failed, as messages name it. */
    static String where(Job job, int index) {
        List<Vignette> vignettes = job.spec().vignettes();
        return "job " + job.id() + ": vignette '" + vignettes.get(index).id() + "' (" + (index + 1) + " of "
                + vignettes.size() + ")";
    }

    /**
     * The failed answer of a vignette whose request the model API refused for what it holds
     * (the client's message, which names the status, the API's message and the endpoint), or
     * whose sandbox setup failed ({@link SandboxSetupException}: the command, its exit status and
     * output).
     */
    static ResponseRecord failedAnswer(String where, Vignette v, EvalSpec spec, long startNanos,
                                               ControlException e) {
        long latencyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        String error = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
        if (e instanceof SandboxSetupException) {
            // The vignette's own files or setup commands: they would fail so on any worker.
            log.warn("{}: its sandbox setup failed (as it would on any worker), stored as a failed answer, the job"
                    + " goes on: {}", where, error);
        } else {
            log.warn("{}: the model API refused this vignette, stored as a failed answer, the job goes on: {}", where,
                    error);
        }
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
    static Throwable unwrapped(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** A failure of the call for a vignette, as the job fails with it. */
    static ControlException translated(String where, Throwable failure) {
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
}
