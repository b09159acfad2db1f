package dev.panoptes.eval.http;

import dev.panoptes.eval.ModelResponse;

import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The calls of one {@link HttpModelClient}, and what they share: the endpoint, the request
 * timeout and {@link RetryPolicy}, the {@link Transport} they send on and the {@link Diagnosis}
 * that reads their answers. It knows which calls are in flight, counts the 429 answers, and
 * says whether the client is closed.
 *
 * <p>Thread-safe. {@link #start} runs on the caller's thread and returns at once;
 * {@link #close()} fails the calls in flight on the thread that closes, so their futures
 * complete there.
 */
final class Calls {
    /** Where every call posts: the base URL followed by {@code /chat/completions}. */
    final URI endpoint;
    /** The client's default model, named in the message of a call abandoned by a close. */
    final String defaultModel;
    /** The longest one attempt may take (less when the call's retry budget runs short). */
    final Duration requestTimeout;
    final RetryPolicy retries;
    final Transport transport;
    final Diagnosis diagnosis;
    /** The calls not yet completed, so that {@link #close()} can fail them. */
    private final Set<Call> live = ConcurrentHashMap.newKeySet();
    /** 429 answers seen, retried ones included; read by whoever reports them to a coordinator. */
    private final LongAdder throttled = new LongAdder();
    private volatile boolean closed;

    Calls(URI endpoint, String defaultModel, Duration requestTimeout, RetryPolicy retries, Transport transport,
          Diagnosis diagnosis) {
        this.endpoint = endpoint;
        this.defaultModel = defaultModel;
        this.requestTimeout = requestTimeout;
        this.retries = retries;
        this.transport = transport;
        this.diagnosis = diagnosis;
    }

    /** Starts a call of {@code model} with the request {@code body}; its first attempt goes out at once. */
    CompletableFuture<ModelResponse> start(String model, byte[] body) {
        Call call = new Call(this, model, body);
        live.add(call);
        if (closed) {
            // close() may have missed this call: it must not be left waiting.
            call.abandon();
            return call;
        }
        call.next();
        return call;
    }

    /**
     * Starts a call of {@code model} posting {@code body} to {@code endpoint}, whose 2xx answer
     * {@code reader} reads; its first attempt goes out at once.
     */
    CompletableFuture<ModelResponse> start(String model, byte[] body, URI endpoint, Diagnosis.BodyReader reader) {
        Call call = new Call(this, model, body, endpoint, reader);
        live.add(call);
        if (closed) {
            call.abandon();
            return call;
        }
        call.next();
        return call;
    }

    /** Fails every call in flight, and every call started from now on. */
    void close() {
        closed = true;
        for (Call call : live) {
            call.abandon();
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** A call is over, however it ended. */
    void ended(Call call) {
        live.remove(call);
    }

    int inFlight() {
        return live.size();
    }

    /** Calls in flight waiting on the timer for their next attempt. */
    int waitingToRetry() {
        int n = 0;
        for (Call call : live) {
            if (call.waitingToRetry()) {
                n++;
            }
        }
        return n;
    }

    void throttled() {
        throttled.increment();
    }

    long throttledCount() {
        return throttled.sum();
    }
}
