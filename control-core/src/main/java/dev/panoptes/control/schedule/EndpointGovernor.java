package dev.panoptes.control.schedule;

import dev.panoptes.control.WorkerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fleet's concurrency against each model API, governed the way TCP governs a window:
 * additive increase, multiplicative decrease. While an API has not said "too many requests"
 * its workers run at their capacities (or at the ceiling, when one is set). When workers report
 * HTTP 429s ({@link #onThrottled}), the API's limit is cut to {@value #DECREASE} of itself: of the
 * limit in force, or of the most jobs the fleet actually had in flight against the API since the
 * last cut when that is lower (a limit never reached says nothing about the API; before the
 * first cut there is no limit but that). At most one cut per round trip: until a job sent after
 * the cut has been answered, further 429 reports come from the same episode and change nothing.
 * Each answered job then raises the limit by 1/limit, about one more job per round of answers. So
 * the fleet settles just below the API's own limit instead of each worker backing off alone and
 * the fleet hammering it in turns.
 *
 * <p>The limit never falls below one job per worker behind the API (as of the scheduler's latest
 * {@link #onWorkers} snapshot), nor below one: a worker with no job at all learns nothing about
 * its API and, once its one request meets a 429, its own HTTP client already backs off; taking
 * the fleet below that would idle workers for an API that their own retries protect.
 *
 * <p>Workers whose {@link WorkerHandle#endpoint()} is null are not governed. Thread-safe: the
 * scheduler's thread acquires, releases and passes snapshots; the threads that read workers'
 * frames report 429s.
 */
public final class EndpointGovernor implements DispatchGate {
    private static final Logger log = LoggerFactory.getLogger(EndpointGovernor.class);

    /**
     * What a cut keeps of the limit. TCP's Reno keeps half; CUBIC 0.7. A model API's limit is a
     * level, not a queue that needs draining, so a gentler cut keeps the fleet nearer to it.
     */
    static final double DECREASE = 0.75;

    private final int ceiling;
    /** Guarded by this. */
    private final Map<String, Endpoint> endpoints = new HashMap<>();
    /** The snapshot the workers per endpoint were counted from; guarded by this. */
    private List<WorkerHandle> counted;

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

    /** Counts the workers behind each API, for the floor of its limit; cheap while the list is the same. */
    @Override
    public synchronized void onWorkers(List<WorkerHandle> workers) {
        if (workers == counted) {
            return;
        }
        counted = workers;
        for (Endpoint e : endpoints.values()) {
            e.workers = 0;
        }
        for (WorkerHandle w : workers) {
            String key = w.endpoint();
            if (key != null) {
                endpoint(key).workers++;
            }
        }
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
        e.peakInFlight = Math.max(e.peakInFlight, e.inFlight);
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
     * A worker of {@code endpoint} saw {@code count} answers 429 from it. Cuts the API's limit to
     * {@value #DECREASE} of itself (see the class description for the floor), unless it was cut
     * less than a round trip ago: until a job sent after that cut is answered, 429s say nothing new.
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
        double floor = Math.max(1, e.workers);
        if (ceiling > 0) {
            floor = Math.min(floor, ceiling);
        }
        // The limit in use: a ceiling (or no limit) above what the fleet ever had in flight says
        // nothing about the API, what it did have in flight when the 429s came does.
        double inUse = Math.min(e.limit, e.peakInFlight);
        e.limit = Math.max(floor, inUse * DECREASE);
        e.cuts++;
        // Answers to the jobs in flight now may all be from before the cut; one more than those
        // is an answer to a job sent after it: a round trip.
        e.quietUntilAnswered = e.answered + e.inFlight + 1;
        e.peakInFlight = e.inFlight;
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
        // Looked up first: computeIfAbsent's lambda captures this, an object per call, and this
        // runs per dispatch and per answer; an endpoint is made once.
        Endpoint e = endpoints.get(key);
        if (e == null) {
            e = new Endpoint(ceiling > 0 ? ceiling : Double.POSITIVE_INFINITY);
            endpoints.put(key, e);
        }
        return e;
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
        /** The most jobs in flight since the last cut (since the start before the first). */
        int peakInFlight;
        long answered;
        long quietUntilAnswered;
        long throttled;
        long cuts;
        /** Workers behind this API in the scheduler's latest snapshot. */
        int workers;

        Endpoint(double limit) {
            this.limit = limit;
        }
    }
}
