package dev.panoptes.eval.http;

import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.nio.AsyncRequestProducer;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;

/**
 * One HTTP exchange with Apache HttpClient, bounded by its timeout on the timer thread: Apache's
 * callback completes it, usually on an I/O thread (on the timer thread when a new connection
 * fails to open); the timeout completes it on the timer thread, a cancel on the cancelling one.
 * Whichever comes first of the answer, a failure, the timeout and a cancel settles it, and a
 * settled exchange stops its timer and, unless it was answered, aborts the exchange: its
 * connection, if it has one, is closed at once and leaves the pool, and the exchange goes no
 * further.
 *
 * <p>Thread-safe: its state changes under its monitor, so that a cancel from any thread, the
 * timeout and Apache's callback cannot cross. {@link #start} is called once, by its owner.
 */
final class Exchange extends CompletableFuture<Answer> implements FutureCallback<Message<HttpResponse, byte[]>> {
    final Duration timeout;
    private final Transport transport;
    /** Guarded by this: Apache's handle on the exchange, once started. */
    private Future<?> inFlight;
    /**
     * Guarded by this: what holds the exchange's connection, from the moment Apache's exec
     * chain reaches the lease of a connection; what an abort closes.
     */
    private AbortableExecRuntime runtime;
    /** Guarded by this: the timeout, once scheduled. */
    private ScheduledFuture<?> deadline;

    Exchange(Transport transport, Duration timeout) {
        this.transport = transport;
        this.timeout = timeout;
    }

    void start(AsyncRequestProducer request) {
        if (isDone()) {
            return;
        }
        ScheduledFuture<?> t;
        try {
            t = transport.schedule(this::timedOut, timeout);
        } catch (RejectedExecutionException e) {
            completeExceptionally(new CancellationException("the model client is closed"));
            return;
        }
        synchronized (this) {
            if (!isDone()) {
                deadline = t;
                t = null;
            }
        }
        if (t != null) {
            // Cancelled while the timeout was being scheduled: it has nothing left to end.
            t.cancel(false);
            return;
        }
        Future<?> f;
        try {
            f = transport.execute(request, this);
        } catch (RuntimeException e) {
            failed(e);
            return;
        }
        boolean settled;
        synchronized (this) {
            settled = isDone();
            if (!settled) {
                inFlight = f;
            }
        }
        if (settled) {
            // Timed out or cancelled before Apache answered the call: abort what it started.
            f.cancel(true);
        }
    }

    /**
     * Apache's exec chain reached the lease of a connection: {@code r} holds it from now on.
     * On the thread that started the exchange.
     */
    void attach(AbortableExecRuntime r) {
        synchronized (this) {
            if (!isDone()) {
                runtime = r;
                return;
            }
        }
        // Settled while Apache was starting it: nothing of it may go on.
        r.abort();
    }

    private void timedOut() {
        completeExceptionally(new TimeoutException("no complete answer within " + Texts.duration(timeout)));
    }

    @Override
    public void completed(Message<HttpResponse, byte[]> message) {
        Answer answer;
        try {
            answer = new Answer(message);
        } catch (RuntimeException e) {
            completeExceptionally(e);
            return;
        }
        complete(answer);
    }

    @Override
    public void failed(Exception ex) {
        completeExceptionally(ex);
    }

    @Override
    public void cancelled() {
        completeExceptionally(new CancellationException("the exchange was cancelled"));
    }

    @Override
    public boolean complete(Answer value) {
        boolean done = super.complete(value);
        if (done) {
            settle(false);
        }
        return done;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        if (done) {
            settle(true);
        }
        return done;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean done = super.cancel(mayInterruptIfRunning);
        if (done) {
            settle(true);
        }
        return done;
    }

    private void settle(boolean abort) {
        Future<?> f;
        ScheduledFuture<?> t;
        AbortableExecRuntime r;
        synchronized (this) {
            f = inFlight;
            t = deadline;
            r = runtime;
            inFlight = null;
            deadline = null;
            runtime = null;
        }
        if (t != null) {
            t.cancel(false);
        }
        if (abort) {
            if (f != null) {
                // Ends a wait for a connection; Apache's future says it was cancelled either way.
                f.cancel(true);
            }
            if (r != null) {
                // Closes the connection even when Apache's cancel aborted nothing.
                r.abort();
            }
        }
    }
}
