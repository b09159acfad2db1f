package dev.panoptes.testing;

import dev.panoptes.control.Usage;
import dev.panoptes.eval.ModelClient;
import dev.panoptes.eval.ModelRequest;
import dev.panoptes.eval.ModelResponse;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A model that answers {@code re: <prompt>}. A test can hold a prompt until it releases it, make a
 * prompt fail with a given exception, and see which prompts started and how many ran at once.
 */
public final class StubModel implements ModelClient {
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<String, RuntimeException> failures = new ConcurrentHashMap<>();
    private final Set<String> started = ConcurrentHashMap.newKeySet();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();

    /** Calls with this prompt wait until {@link #release(String)}. */
    public StubModel hold(String prompt) {
        gates.put(prompt, new CountDownLatch(1));
        return this;
    }

    /** Calls with this prompt throw {@code e}. */
    public StubModel fail(String prompt, RuntimeException e) {
        failures.put(prompt, e);
        return this;
    }

    public void release(String prompt) {
        gates.get(prompt).countDown();
    }

    public boolean started(String prompt) {
        return started.contains(prompt);
    }

    public int inFlight() {
        return inFlight.get();
    }

    public int maxInFlight() {
        return maxInFlight.get();
    }

    /** Runs {@link #complete} on a thread of the stub's own, so that a held prompt blocks nobody. */
    @Override
    public CompletableFuture<ModelResponse> completeAsync(ModelRequest request) {
        CompletableFuture<ModelResponse> answer = new CompletableFuture<>();
        Thread call = new Thread(() -> {
            try {
                answer.complete(complete(request));
            } catch (InterruptedException e) {
                answer.cancel(false);
            } catch (RuntimeException e) {
                answer.completeExceptionally(e);
            }
        }, "stub-model-call");
        call.setDaemon(true);
        call.start();
        answer.whenComplete((r, e) -> {
            if (answer.isCancelled()) {
                call.interrupt();
            }
        });
        return answer;
    }

    @Override
    public ModelResponse complete(ModelRequest request) throws InterruptedException {
        String prompt = request.prompt();
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        started.add(prompt);
        try {
            CountDownLatch gate = gates.get(prompt);
            if (gate != null) {
                gate.await();
            }
            RuntimeException failure = failures.get(prompt);
            if (failure != null) {
                throw failure;
            }
            return new ModelResponse("re: " + prompt, "stop", "stub-model", new Usage(1, 2), 3);
        } finally {
            inFlight.decrementAndGet();
        }
    }
}
