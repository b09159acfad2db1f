package dev.panoptes.eval.http;

import org.apache.hc.client5.http.EndpointInfo;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.async.AsyncExecRuntime;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.concurrent.Cancellable;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.nio.AsyncClientExchangeHandler;
import org.apache.hc.core5.util.TimeValue;

import java.io.InterruptedIOException;

/**
 * Apache HttpClient's runtime of one exchange (what leases, connects and releases its pooled
 * connection), made abortable from outside: {@link #abort()} closes the exchange's connection at
 * once and hands its pool entry back discarded, and every step of the exchange that comes later
 * (a lease that completes, a connect, sending the request) fails instead of going on.
 *
 * <p>Why not Apache's own cancel: the future {@code CloseableHttpAsyncClient.execute} returns
 * cancels only the last step its exec chain registered with it, and the chain registers a step
 * after starting it. When the lease of a pooled connection completes at once, the chain runs on
 * to sending the request inside the lease call, and then registers the finished lease over the
 * step that could abort the exchange; on a new connection the same happens whenever the I/O
 * thread connects and sends before the starting thread registers the connect. The cancel then
 * reports success and aborts nothing: the connection stays leased, half-read, until the socket
 * timeout, while the model server generates an answer nobody reads. This runtime does not
 * depend on that bookkeeping: it holds the exchange's connection itself.
 *
 * <p>Thread-safe: Apache calls it on the thread that starts the exchange and on its I/O and
 * connect threads; {@link #abort()} may be called from any thread, at any time, more than once.
 */
final class AbortableExecRuntime implements AsyncExecRuntime {
    private final AsyncExecRuntime delegate;
    private final Object lock = new Object();
    /** Guarded by lock: abort() was called. */
    private boolean aborted;
    /**
     * Guarded by lock: a connect is in progress. Discarding the endpoint then would leave the
     * connection being opened without an owner, so abort() cancels the connect instead, and
     * the connect's end discards the endpoint.
     */
    private boolean connecting;
    /**
     * Guarded by lock: the handles of the steps started, each kept apart, so that a step
     * registered late cannot hide a later one (the very fault this class works around).
     */
    private Cancellable lease;
    private Cancellable connect;
    private Cancellable execution;

    AbortableExecRuntime(AsyncExecRuntime delegate) {
        this.delegate = delegate;
    }

    /**
     * Aborts the exchange: closes its connection, if it has one, at once (the server sees the
     * client hang up) and releases the pool entry, discarded, never to be reused; a lease or
     * a connect in progress is cancelled, and no later step proceeds. Idempotent; any thread.
     */
    void abort() {
        Cancellable[] steps;
        boolean connectInProgress;
        synchronized (lock) {
            if (aborted) {
                return;
            }
            aborted = true;
            steps = new Cancellable[] {lease, connect, execution};
            connectInProgress = connecting;
        }
        for (Cancellable step : steps) {
            if (step != null) {
                step.cancel();
            }
        }
        if (!connectInProgress) {
            delegate.discardEndpoint();
        }
    }

    /** Whether {@link #abort()} was called. Any thread. */
    boolean isAborted() {
        synchronized (lock) {
            return aborted;
        }
    }

    private static InterruptedIOException abortedFailure() {
        return new InterruptedIOException("the exchange was aborted");
    }

    @Override
    public boolean isEndpointAcquired() {
        return delegate.isEndpointAcquired();
    }

    @Override
    public Cancellable acquireEndpoint(String id, HttpRoute route, Object state, HttpClientContext context,
                                       FutureCallback<AsyncExecRuntime> callback) {
        if (isAborted()) {
            callback.failed(abortedFailure());
            return () -> false;
        }
        Cancellable handle = delegate.acquireEndpoint(id, route, state, context, new FutureCallback<>() {
            @Override
            public void completed(AsyncExecRuntime runtime) {
                // The delegate holds the endpoint before this runs: an abort() that came first
                // is seen here, one that comes later finds the endpoint to discard.
                if (isAborted()) {
                    delegate.discardEndpoint();
                    callback.failed(abortedFailure());
                } else {
                    callback.completed(AbortableExecRuntime.this);
                }
            }

            @Override
            public void failed(Exception ex) {
                callback.failed(ex);
            }

            @Override
            public void cancelled() {
                callback.cancelled();
            }
        });
        if (!remember(handle, Step.LEASE)) {
            handle.cancel();
        }
        return handle;
    }

    @Override
    public void releaseEndpoint() {
        // Apache releases an endpoint as reusable only once the answer is read whole; after an
        // abort it is discarded whatever the exchange's state.
        if (isAborted()) {
            delegate.discardEndpoint();
        } else {
            delegate.releaseEndpoint();
        }
    }

    @Override
    public void discardEndpoint() {
        delegate.discardEndpoint();
    }

    @Override
    public boolean isEndpointConnected() {
        return delegate.isEndpointConnected();
    }

    @Override
    public Cancellable connectEndpoint(HttpClientContext context, FutureCallback<AsyncExecRuntime> callback) {
        boolean proceed;
        synchronized (lock) {
            proceed = !aborted;
            connecting = proceed;
        }
        if (!proceed) {
            callback.failed(abortedFailure());
            return () -> false;
        }
        Cancellable handle;
        try {
            handle = delegate.connectEndpoint(context, new FutureCallback<>() {
                @Override
                public void completed(AsyncExecRuntime runtime) {
                    if (connectEnded()) {
                        delegate.discardEndpoint();
                        callback.failed(abortedFailure());
                    } else {
                        callback.completed(AbortableExecRuntime.this);
                    }
                }

                @Override
                public void failed(Exception ex) {
                    if (connectEnded()) {
                        delegate.discardEndpoint();
                    }
                    callback.failed(ex);
                }

                @Override
                public void cancelled() {
                    if (connectEnded()) {
                        delegate.discardEndpoint();
                    }
                    callback.cancelled();
                }
            });
        } catch (RuntimeException e) {
            // No connect started: an abort() must not wait for its end.
            if (connectEnded()) {
                delegate.discardEndpoint();
            }
            throw e;
        }
        if (!remember(handle, Step.CONNECT)) {
            handle.cancel();
        }
        return handle;
    }

    /** The connect in progress ended; whether the exchange was aborted meanwhile. */
    private boolean connectEnded() {
        synchronized (lock) {
            connecting = false;
            return aborted;
        }
    }

    @Override
    public void disconnectEndpoint() {
        delegate.disconnectEndpoint();
    }

    @Override
    public void upgradeTls(HttpClientContext context) {
        delegate.upgradeTls(context);
    }

    @Override
    public void upgradeTls(HttpClientContext context, FutureCallback<AsyncExecRuntime> callback) {
        delegate.upgradeTls(context, callback == null ? null : new FutureCallback<>() {
            @Override
            public void completed(AsyncExecRuntime runtime) {
                callback.completed(AbortableExecRuntime.this);
            }

            @Override
            public void failed(Exception ex) {
                callback.failed(ex);
            }

            @Override
            public void cancelled() {
                callback.cancelled();
            }
        });
    }

    @Override
    public EndpointInfo getEndpointInfo() {
        return delegate.getEndpointInfo();
    }

    @Override
    public boolean validateConnection() {
        return delegate.validateConnection();
    }

    @Override
    public Cancellable execute(String id, AsyncClientExchangeHandler exchangeHandler, HttpClientContext context) {
        if (isAborted()) {
            delegate.discardEndpoint();
            exchangeHandler.failed(abortedFailure());
            return () -> false;
        }
        if (!delegate.isEndpointConnected()) {
            // Apache would connect inside execute, where abort() could not tell a connect is in
            // progress: connect here instead, then execute.
            connectEndpoint(context, new FutureCallback<>() {
                @Override
                public void completed(AsyncExecRuntime runtime) {
                    try {
                        execute(id, exchangeHandler, context);
                    } catch (RuntimeException e) {
                        exchangeHandler.failed(e);
                    }
                }

                @Override
                public void failed(Exception ex) {
                    exchangeHandler.failed(ex);
                }

                @Override
                public void cancelled() {
                    exchangeHandler.failed(new InterruptedIOException("the connect was cancelled"));
                }
            });
            // Cancelling the execution aborts the exchange, whichever step it has reached.
            return () -> {
                abort();
                return true;
            };
        }
        Cancellable handle = delegate.execute(id, exchangeHandler, context);
        // An abort() from here on finds the endpoint acquired and connected, and closes it: the
        // exchange then fails on its closed connection.
        if (!remember(handle, Step.EXECUTION)) {
            handle.cancel();
        }
        return handle;
    }

    private enum Step { LEASE, CONNECT, EXECUTION }

    /** Keeps a step's handle for abort(); false when abort() came first, which the caller then cancels. */
    private boolean remember(Cancellable handle, Step step) {
        synchronized (lock) {
            if (aborted) {
                return false;
            }
            switch (step) {
                case LEASE -> lease = handle;
                case CONNECT -> connect = handle;
                case EXECUTION -> execution = handle;
            }
            return true;
        }
    }

    @Override
    public void markConnectionReusable(Object state, TimeValue validDuration) {
        delegate.markConnectionReusable(state, validDuration);
    }

    @Override
    public void markConnectionNonReusable() {
        delegate.markConnectionNonReusable();
    }

    /** A runtime for another exchange (a retry or a redirect): abortable on its own. */
    @Override
    public AsyncExecRuntime fork() {
        return new AbortableExecRuntime(delegate.fork());
    }
}
