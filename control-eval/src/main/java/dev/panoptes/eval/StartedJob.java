package dev.panoptes.eval;

import dev.panoptes.control.ControlException;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;
import dev.panoptes.control.WorkerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One job started with {@link EvalJobRunner#start}: its vignettes sent in spec order, each as
 * soon as the worker's {@link RequestPermits} grant a permit, as many at once as the permits
 * allow; its records kept in spec order whatever order the answers come in. It completes with
 * the outcome once every vignette has answered, or with the first failure that is not the
 * vignette's own; then, however it ended (cancelled too), the calls still in flight are
 * cancelled, its waiter is withdrawn, and every permit it held goes back.
 *
 * <p>Threads: the sending ({@link #pump}) runs on one thread at a time, whichever asked last
 * (the starter, a client thread whose answer freed a permit), guarded by {@code pumps}; answers
 * arrive on the client's threads and meet under {@code lock}. Never blocks, never uses the
 * common pool.
 */
final class StartedJob extends CompletableFuture<JobOutcome> {
    private static final Logger log = LoggerFactory.getLogger(StartedJob.class);

    private final ModelClient client;
    private final SandboxCalls sandboxed;
    private final RequestPermits permits;
    /** Where its waiters stand among other jobs': its start. */
    private final long order;
    private final Job job;
    private final int size;
    /** Asks to pump; only the thread that raised it from 0 pumps, until it is back at 0. */
    private final AtomicInteger pumps = new AtomicInteger();
    /** Permits granted to this job's waiter and not yet spent on a vignette. */
    private final AtomicInteger granted = new AtomicInteger();

    private final Object lock = new Object();
    /** Guarded by lock. */
    private final ResponseRecord[] records;
    /** The calls in flight, for the end to cancel; guarded by lock. */
    private final CompletableFuture<?>[] calls;
    /** Guarded by lock. */
    private int answered;
    /** What the answered calls reported, for a failure of the job to carry; guarded by lock. */
    private Usage spent = Usage.ZERO;

    /** The next vignette to send; only the pumping thread touches it. */
    private int next;
    /** The waiter queued for a permit, or null; only the pumping thread touches it. */
    private RequestPermits.Waiter waiter;

    StartedJob(ModelClient client, SandboxCalls sandboxed, RequestPermits permits, long order, Job job) {
        this.client = client;
        this.sandboxed = sandboxed;
        this.permits = permits;
        this.order = order;
        this.job = job;
        this.size = job.spec().vignettes().size();
        this.records = new ResponseRecord[size];
        this.calls = new CompletableFuture<?>[size];
        whenComplete((outcome, failure) -> ended());
    }

    /** Sends what the permits allow, on this thread or on the one already sending. */
    void pump() {
        if (pumps.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            sendWhatThePermitsAllow();
            missed = pumps.addAndGet(-missed);
        } while (missed != 0);
    }

    private void sendWhatThePermitsAllow() {
        while (true) {
            if (isDone() || next == size) {
                if (waiter != null && isDone()) {
                    // Withdrawn, or granted already: then its grant lands in `granted`, and its
                    // pump gives the permit back below.
                    permits.cancel(waiter);
                    waiter = null;
                }
                for (int unused = granted.getAndSet(0); unused > 0; unused--) {
                    permits.release();
                }
                if (size == 0 && !isDone()) {
                    complete(new JobOutcome(job.id(), List.of()));
                }
                return;
            }
            if (granted.get() > 0) {
                granted.decrementAndGet();
                waiter = null;
            } else if (waiter != null) {
                return;
            } else {
                RequestPermits.Waiter queued = permits.acquire(order, this::onGranted);
                if (queued != null) {
                    waiter = queued;
                    return;
                }
            }
            send(next++);
        }
    }

    /** A released permit is now this job's: on the releasing thread. */
    private void onGranted() {
        granted.incrementAndGet();
        pump();
    }

    /** Sends one vignette with a permit held; the permit goes back when its call ends. */
    private void send(int index) {
        long startNanos = System.nanoTime();
        CompletableFuture<ModelResponse> call;
        try {
            call = EvalJobRunner.call(client, sandboxed, job, index);
        } catch (RuntimeException e) {
            // Thrown before any call: judged as a failed call would be.
            permits.release();
            answered(index, startNanos, null, e);
            return;
        }
        if (call == null) {
            permits.release();
            completeExceptionally(new WorkerException(EvalJobRunner.where(job, index)
                    + ": the model client returned no future"));
            return;
        }
        synchronized (lock) {
            calls[index] = call;
        }
        if (isDone()) {
            // Ended while the call started: the end may not have seen the call to cancel.
            call.cancel(true);
        }
        call.whenComplete((r, t) -> {
            // The answer first: a failure that ends the job must end it before the permit could
            // let this job's next vignette out.
            answered(index, startNanos, r, t);
            permits.release();
        });
    }

    /** Records a vignette's answer, or ends the job with its failure. */
    private void answered(int index, long startNanos, ModelResponse r, Throwable failure) {
        synchronized (lock) {
            calls[index] = null;
        }
        if (isDone()) {
            return;
        }
        ResponseRecord record;
        if (failure != null) {
            String where = EvalJobRunner.where(job, index);
            if (EvalJobRunner.unwrapped(failure) instanceof ControlException e && e.scope() == FailureScope.JOB) {
                record = EvalJobRunner.failedAnswer(where, job.spec().vignettes().get(index), job.spec(),
                        startNanos, e);
            } else {
                completeExceptionally(EvalJobRunner.translated(where, failure));
                return;
            }
        } else if (r == null) {
            completeExceptionally(new WorkerException(EvalJobRunner.where(job, index)
                    + ": the model client returned no response"));
            return;
        } else {
            // Named only when logged: the name is a string built per answer, on a client thread.
            if (log.isDebugEnabled()) {
                log.debug("{} answered by {} in {} ms", EvalJobRunner.where(job, index), r.model(), r.latencyMs());
            }
            record = r.record(job.spec().vignettes().get(index).id());
        }
        boolean all;
        synchronized (lock) {
            records[index] = record;
            all = ++answered == size;
            if (record.usage() != null) {
                spent = spent.plus(record.usage());
            }
        }
        if (all) {
            complete(new JobOutcome(job.id(), Arrays.asList(records.clone())));
        }
    }

    /**
     * Fails the job; a {@link ControlException} carries what the calls answered so far cost
     * ({@link ControlException#spent}), since those answers will not be stored.
     */
    @Override
    public boolean completeExceptionally(Throwable failure) {
        if (failure instanceof ControlException e && !isDone()) {
            Usage sofar;
            synchronized (lock) {
                sofar = spent;
            }
            e.addSpent(sofar);
        }
        return super.completeExceptionally(failure);
    }

    /** However the job ended: cancels the calls in flight and gives back what it holds. */
    private void ended() {
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        synchronized (lock) {
            for (CompletableFuture<?> call : calls) {
                if (call != null) {
                    inFlight.add(call);
                }
            }
        }
        for (CompletableFuture<?> call : inFlight) {
            call.cancel(true);
        }
        pump();
    }
}
