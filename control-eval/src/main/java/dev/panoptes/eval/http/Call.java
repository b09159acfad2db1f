package dev.panoptes.eval.http;

import dev.panoptes.control.FailureScope;
import dev.panoptes.control.JobFailedException;
import dev.panoptes.control.Plural;
import dev.panoptes.control.WorkerException;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.eval.ModelResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One model call: its attempts one after another, each an {@link Exchange}, and the waits
 * between them on the timer, as the {@link RetryPolicy} allows; the future completes with the
 * answer or with the exception its {@link AttemptFailure} calls for (see {@link HttpModelClient}
 * on failures).
 *
 * <p>Threads: the first attempt starts on the caller's thread, later ones on the timer thread;
 * an attempt ends on an I/O thread (or on the timer thread when it times out or cannot
 * connect), and the call completes there. A cancel completes it on the cancelling thread, a
 * close on the closing one. State changes are made under its monitor, so that a cancel, a
 * close, an attempt's end and a retry's start cannot cross.
 */
final class Call extends CompletableFuture<ModelResponse> {
    private static final Logger log = LoggerFactory.getLogger(HttpModelClient.class);

    private final Calls calls;
    /** The model this call asks for; what its messages name. */
    private final String model;
    private final byte[] body;
    /** Where its attempts post, and what reads a 2xx answer. */
    private final URI endpoint;
    private final Diagnosis.BodyReader reader;
    private final long start = System.nanoTime();
    private final long deadline;
    /** Guarded by this: attempts started. */
    private int attempts;
    /** Guarded by this: the attempt in flight, or null. */
    private Exchange exchange;
    /** Guarded by this: the wait for the next attempt, or null. */
    private ScheduledFuture<?> retry;
    /** Guarded by this: why the last attempt failed, for the message of a close. */
    private String lastFailure;

    Call(Calls calls, String model, byte[] body) {
        this(calls, model, body, calls.endpoint, null);
    }

    /**
     * A call posting to {@code endpoint}, its 2xx answers read by {@code reader} (null for a chat
     * completion's).
     */
    Call(Calls calls, String model, byte[] body, URI endpoint, Diagnosis.BodyReader reader) {
        this.calls = calls;
        this.model = model;
        this.body = body;
        this.endpoint = endpoint;
        this.reader = reader;
        this.deadline = start + calls.retries.retryBudget().toNanos();
    }

    /** Starts the next attempt, unless the call is over. On the caller's thread, then the timer's. */
    void next() {
        Exchange x;
        int attempt;
        synchronized (this) {
            if (isDone()) {
                return;
            }
            attempt = ++attempts;
            retry = null;
            long remaining = deadline - System.nanoTime();
            Duration timeout = remaining < calls.requestTimeout.toNanos() ? Duration.ofNanos(Math.max(remaining, 1))
                    : calls.requestTimeout;
            x = new Exchange(calls.transport, timeout);
            exchange = x;
        }
        x.whenComplete((answer, failure) -> attempted(attempt, x, answer, failure));
        x.start(calls.transport.request("POST", endpoint, body));
    }

    /** An attempt ended: succeed, fail, or wait for the next one. */
    private void attempted(int attempt, Exchange x, Answer answer, Throwable failure) {
        if (isDone()) {
            return;
        }
        AttemptFailure f;
        if (failure == null) {
            try {
                if (answer.status() == 429) {
                    calls.throttled();
                }
                ModelResponse r = calls.diagnosis.answer(answer, model, reader);
                long latencyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                if (attempt > 1) {
                    log.info("{} (model {}) succeeded on attempt {} after {}", call(), model, attempt,
                            Texts.millis(latencyMs));
                }
                complete(r.withLatency(latencyMs));
                return;
            } catch (AttemptFailure e) {
                f = e;
            } catch (RuntimeException e) {
                completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed"
                        + " unexpectedly reading the answer: " + e), e));
                return;
            }
        } else {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause instanceof CancellationException) {
                // Only this call cancels its exchanges, once it is over; or the client closed.
                completeExceptionally(new WorkerException(redact(abandonedText(attempt, null)), cause));
                return;
            }
            f = cause instanceof TimeoutException
                    ? new AttemptFailure(FailureScope.TRANSIENT, timedOutText(x.timeout), null, null)
                    : calls.diagnosis.transportFailure(cause, x.timeout);
        }
        failed(attempt, f);
    }

    private void failed(int attempt, AttemptFailure failure) {
        long elapsedNanos = System.nanoTime() - start;
        RetryPolicy policy = calls.retries;
        if (failure.scope == FailureScope.WORKER) {
            // The description is a whole sentence saying what to check: it ends up in the
            // coordinator's line about this worker.
            completeExceptionally(new WorkerFaultException(redact(failure.description), failure.getCause()));
            return;
        }
        if (failure.scope == FailureScope.JOB) {
            // Status and the server's words first: this text is what a failed answer stores
            // and what the run's summary quotes.
            completeExceptionally(new JobFailedException(redact(failure.description + ", from " + call()
                    + " (model " + model + "); not retried, the request would fail the same way again"),
                    failure.getCause()));
            return;
        }
        if (!failure.retryHere) {
            completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed with "
                    + failure.description), failure.getCause()));
            return;
        }
        if (attempt >= policy.maxAttempts()) {
            completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed after "
                    + attempts(attempt) + " in " + Texts.millis(TimeUnit.NANOSECONDS.toMillis(elapsedNanos))
                    + ", retries exhausted; last failure: " + failure.description), failure.getCause()));
            return;
        }
        if (calls.isClosed()) {
            completeExceptionally(new WorkerException(redact(abandonedText(attempt, failure.description)),
                    failure.getCause()));
            return;
        }
        Duration delay = policy.delay(attempt, failure);
        if (System.nanoTime() + delay.toNanos() >= deadline) {
            completeExceptionally(new WorkerException(redact(call() + " (model " + model + ") failed after "
                    + attempts(attempt) + " in " + Texts.millis(TimeUnit.NANOSECONDS.toMillis(elapsedNanos))
                    + ", retry budget of " + Texts.duration(policy.retryBudget()) + " exhausted (next retry was"
                    + " due in " + Texts.duration(delay) + "); last failure: " + failure.description),
                    failure.getCause()));
            return;
        }
        log.warn("{} (model {}) attempt {} of {} failed: {}; retrying in {}", call(), model, attempt,
                policy.maxAttempts(), redact(failure.description), Texts.duration(delay));
        synchronized (this) {
            if (isDone()) {
                return;
            }
            lastFailure = failure.description;
            exchange = null;
            try {
                retry = calls.transport.schedule(this::next, delay);
                return;
            } catch (RejectedExecutionException e) {
                // The client closed while this attempt ended: fail below, outside the lock.
            }
        }
        completeExceptionally(new WorkerException(redact(abandonedText(attempt, failure.description)),
                failure.getCause()));
    }

    /**
     * What an attempt that timed out says. An attempt given less than the request timeout ran
     * into the retry budget, not a slow model: the failure that caused the retries is the news,
     * and it would otherwise be lost from the call's message.
     */
    private String timedOutText(Duration timeout) {
        String text = "request timed out after " + Texts.duration(timeout);
        String before;
        synchronized (this) {
            before = lastFailure;
        }
        if (timeout.compareTo(calls.requestTimeout) < 0 && before != null) {
            return text + ", cut short by the retry budget; the failure before it: " + before;
        }
        return text;
    }

    /** Whether the call waits on the timer for its next attempt (its last one failed). */
    synchronized boolean waitingToRetry() {
        return retry != null;
    }

    /** Fails the call because the client is closing. */
    void abandon() {
        int attempt;
        String last;
        synchronized (this) {
            attempt = attempts;
            last = lastFailure;
        }
        completeExceptionally(new WorkerException(redact(abandonedText(attempt, last))));
    }

    @Override
    public boolean complete(ModelResponse value) {
        boolean done = super.complete(value);
        if (done) {
            over();
        }
        return done;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        if (done) {
            over();
        }
        return done;
    }

    /** Cancels the call: aborts its attempt in flight, or its wait for the next one. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean done = super.cancel(mayInterruptIfRunning);
        if (done) {
            over();
        }
        return done;
    }

    /** The call is over, however it ended: nothing of it may go on. */
    private void over() {
        Exchange x;
        ScheduledFuture<?> r;
        synchronized (this) {
            x = exchange;
            r = retry;
            exchange = null;
            retry = null;
        }
        if (r != null) {
            r.cancel(false);
        }
        if (x != null) {
            // A no-op when the attempt is what ended the call.
            x.cancel(true);
        }
        calls.ended(this);
    }

    private String call() {
        return "POST " + endpoint;
    }

    private String redact(String text) {
        return calls.diagnosis.redact(text);
    }

    private static String attempts(int n) {
        return Plural.of(n, "attempt");
    }

    private String abandonedText(int attempts, String lastFailure) {
        return call() + " (model " + calls.defaultModel + ") abandoned after " + attempts(attempts)
                + ": the client was closed" + (lastFailure == null ? "" : "; last failure: " + lastFailure);
    }
}
