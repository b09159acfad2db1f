package dev.panoptes.control.schedule;

import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fleet's concurrency against each model API, governed the way TCP governs a window:
 * additive increase, multiplicative decrease. While an API has not said "too many requests"
 * its workers run at their capacities (or at the ceiling, when one is set); when workers report
 * HTTP 429s ({@link #onThrottled}), the API's limit falls to three quarters of what was in flight,
 * at most once per round of answers; each answered job then raises it by 1/limit, about one more job per
 * round. So the fleet settles just below the API's own limit instead of each worker backing off
 * alone and the fleet hammering it in turns.
 *
 * <p>Workers whose {@link WorkerHandle#endpoint()} is null are not governed. Thread-safe: the
 * scheduler's thread acquires and releases, the threads that read workers' frames report 429s.
 */
public final class EndpointGovernor implements DispatchGate {
    private static final Logger log = LoggerFactory.getLogger(EndpointGovernor.class);

    /**
     * What a cut keeps of the jobs in flight. TCP's Reno keeps half; CUBIC 0.7. A model API's limit
     * is a level, not a queue that needs draining, so a gentler cut keeps the fleet nearer to it.
     */
    static final double DECREASE = 0.75;

    private final int ceiling;
    /** Guarded by this. */
    private final Map<String, Endpoint> endpoints = new HashMap<>();

    /**
     * @param ceiling the most jobs in flight against one API at any time; 0 for no ceiling (only
     *                the 429s limit it)
     * @throws IllegalArgumentException when the ceiling is negative
     */
    public EndpointGovernor(int ceiling) {
        if (ceiling < 0) {
            throw new IllegalArgumentException("the ceiling must be 0 (none) or more, got " + ceiling);
        }
        this.ceiling = ceiling;
    }

    @Override
    public synchronized boolean tryAcquire(WorkerHandle worker) {
        String key = worker.endpoint();
        if (key == null) {
            return true;
        }
        Endpoint e = endpoint(key);
        if (e.inFlight >= Math.floor(e.limit)) {
            return false;
        }
        e.inFlight++;
        return true;
    }

    @Override
    public synchronized void release(WorkerHandle worker, boolean succeeded) {
        String key = worker.endpoint();
        if (key == null) {
            return;
        }
        Endpoint e = endpoint(key);
        e.inFlight = Math.max(0, e.inFlight - 1);
        e.answered++;
        if (succeeded && Double.isFinite(e.limit)) {
            e.limit = Math.min(ceiling > 0 ? ceiling : Double.MAX_VALUE, e.limit + 1 / e.limit);
        }
    }

    /**
     * A worker of {@code endpoint} saw {@code count} answers 429 from it. Cuts the API's limit
     * (to {@value #DECREASE} of what is in flight, at least 1), unless it was cut less than a round
     * of answers ago: the jobs in flight then were sent before the cut, and their 429s say nothing new.
     */
    public synchronized void onThrottled(String endpoint, long count) {
        if (endpoint == null || count <= 0) {
            return;
        }
        Endpoint e = endpoint(endpoint);
        e.throttled += count;
        if (e.answered < e.quietUntilAnswered) {
            return;
        }
        double before = e.limit;
        e.limit = Math.max(1, Math.min(e.limit, e.inFlight) * DECREASE);
        e.cuts++;
        e.quietUntilAnswered = e.answered + e.inFlight;
        log.debug("endpoint {} answered 429 ({} so far): its limit goes from {} to {} jobs in flight", endpoint,
                e.throttled, before, e.limit);
    }

    /** Each endpoint's state now, by endpoint; for the status view and the summary. */
    public synchronized Map<String, State> state() {
        Map<String, State> out = new LinkedHashMap<>();
        endpoints.forEach((k, e) -> out.put(k, new State(e.limit, e.inFlight, e.throttled, e.cuts)));
        return out;
    }

    private Endpoint endpoint(String key) {
        return endpoints.computeIfAbsent(key, k -> new Endpoint(ceiling > 0 ? ceiling : Double.POSITIVE_INFINITY));
    }

    /**
     * One API's state.
     *
     * @param limit     jobs it may have in flight; infinite while it has not throttled and has no ceiling
     * @param inFlight  jobs in flight against it now
     * @param throttled 429s its workers reported
     * @param cuts      times its limit was cut
     */
    public record State(double limit, int inFlight, long throttled, long cuts) {
    }

    /** Guarded by the governor. */
    private static final class Endpoint {
        double limit;
        int inFlight;
        long answered;
        long quietUntilAnswered;
        long throttled;
        long cuts;

        Endpoint(double limit) {
            this.limit = limit;
        }
    }
}
