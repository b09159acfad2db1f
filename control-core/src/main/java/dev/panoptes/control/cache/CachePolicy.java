package dev.panoptes.control.cache;

import dev.panoptes.control.Job;
import dev.panoptes.control.RequestKey;
import dev.panoptes.control.SpecParams;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * When a run's requests are served from the response cache: when the cache is on, the job names
 * its model, its temperature is 0 and its model source is known ({@link SpecParams#modelSource()}:
 * the answer must come from the same model server, or one the user named the same), for an answer
 * a model gave at most {@code maxAge} ago.
 *
 * <p>Only temperature 0 is cached: at any other temperature the model samples, and a stored answer
 * is one draw, not the answer, so asking again is the point of asking. A run that sets no
 * temperature is not cached either: it gets the model API's default, which is 1 for
 * OpenAI-compatible chat completions, so it samples. A seed does not change this: few APIs
 * promise that a seed reproduces an answer.
 *
 * @param enabled whether the cache is used at all ({@code --no-cache} turns it off)
 * @param maxAge  how old an answer may be and still be served (an API's model changes under its
 *                name); positive
 */
public record CachePolicy(boolean enabled, Duration maxAge) {
    /** How old a cached answer may be by default: 30 days. */
    public static final Duration DEFAULT_MAX_AGE = Duration.ofDays(30);

    /** @throws IllegalArgumentException when maxAge is not positive */
    public CachePolicy {
        Objects.requireNonNull(maxAge, "maxAge");
        if (maxAge.isZero() || maxAge.isNegative()) {
            throw new IllegalArgumentException("the cache's maximum age must be positive, got " + maxAge);
        }
    }

    /** On, for answers up to {@link #DEFAULT_MAX_AGE} old. */
    public static CachePolicy defaults() {
        return new CachePolicy(true, DEFAULT_MAX_AGE);
    }

    /** Off: every request goes to its model. */
    public static CachePolicy off() {
        return new CachePolicy(false, DEFAULT_MAX_AGE);
    }

    /** On, for answers up to {@code maxAge} old. */
    public static CachePolicy maxAge(Duration maxAge) {
        return new CachePolicy(true, maxAge);
    }

    /** True when this job's requests may be served from the cache. */
    public boolean appliesTo(Job job) {
        return enabled && job.model() != null && deterministic(job.spec().params());
    }

    /**
     * True for temperature 0 given explicitly, to a known model source: the only requests whose
     * answer is worth keeping.
     */
    public static boolean deterministic(SpecParams params) {
        return RequestKey.cacheable(params);
    }

    /** The oldest an answer may have been stored, seen at {@code now}. */
    public Instant notBefore(Instant now) {
        return now.minus(maxAge);
    }

    /** Why a run with these parameters is not cached, for the console; null when it may be. */
    public String whyOff(SpecParams params) {
        return whyOff(params, false);
    }

    /**
     * Why a run with these parameters is not cached, for the console; null when it may be.
     *
     * @param loglikelihoodOnly true when every vignette of the run is asked by log-likelihood
     *                          (multiple choice): such a request is sent at temperature 0 whatever
     *                          the run's, so its answer does not sample, and the line says what
     *                          does keep it from the cache (the run's temperature, in every key)
     */
    public String whyOff(SpecParams params, boolean loglikelihoodOnly) {
        if (!enabled) {
            return "off (--no-cache)";
        }
        if (loglikelihoodOnly && (params.temperature() == null || params.temperature() != 0.0)) {
            return "off: log-likelihood (multiple-choice) answers do not depend on the temperature (they are asked"
                    + " at 0), but the cache keys every request by the run's ("
                    + (params.temperature() == null ? "none given" : params.temperature().toString())
                    + "); run with --temperature 0 to cache them";
        }
        if (params.temperature() == null) {
            return "off: no --temperature, so the model API's default (1 for OpenAI-compatible APIs) samples;"
                    + " only --temperature 0 is cached";
        }
        if (params.temperature() != 0.0) {
            return "off: temperature " + params.temperature() + " samples; only --temperature 0 is cached";
        }
        if (params.modelSource() == null) {
            return "off: the workers each ask their own model API, so which model would answer is unknown;"
                    + " give --model-id NAME (the same for every run whose model servers serve the same model)"
                    + " to share answers between such runs";
        }
        return null;
    }
}
