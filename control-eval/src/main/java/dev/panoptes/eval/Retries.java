package dev.panoptes.eval;

import java.net.http.HttpHeaders;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Pattern;

/** The pure parts of the retry policy: which statuses to retry, how long to wait. */
final class Retries {
    /** A non-negative decimal number: what delta-seconds and milliseconds headers look like. */
    private static final Pattern NUMBER = Pattern.compile("\\d{1,12}(\\.\\d{1,9})?");

    private Retries() {
    }

    /**
     * Whether a non-2xx status may pass if the request is sent again: 408 (request timeout),
     * 409 (conflict, e.g. a lock), 429 unless the account is out of quota, and every 5xx.
     * Everything else (400, 401, 403, 404, 422, other 4xx, redirects) is the request's or the
     * configuration's fault and would fail the same way again.
     *
     * @param error the error envelope of the response, or null
     */
    static boolean isRetryableStatus(int status, ApiError error) {
        if (status == 429) {
            return error == null || !error.isInsufficientQuota();
        }
        return status == 408 || status == 409 || (status >= 500 && status <= 599);
    }

    /**
     * Exponential backoff with full jitter: a uniformly random delay between 0 and
     * {@code min(cap, base * 2^(failedAttempts - 1))}.
     *
     * @param failedAttempts attempts made so far, at least 1
     * @param random         uniformly distributed in [0, 1)
     */
    static Duration backoff(int failedAttempts, Duration base, Duration cap, double random) {
        int doublings = Math.min(Math.max(failedAttempts - 1, 0), 30);
        long baseNanos = base.toNanos();
        long capNanos = cap.toNanos();
        long ceiling = baseNanos > (capNanos >> doublings) ? capNanos : Math.min(capNanos, baseNanos << doublings);
        return Duration.ofNanos((long) (ceiling * random));
    }

    /**
     * The delay the server asked for: {@code retry-after-ms} (milliseconds, as OpenAI sends it)
     * when present and valid, else {@code Retry-After} as delta-seconds or an HTTP date. A date
     * in the past means no delay. Malformed or negative values are ignored.
     *
     * @param now the current time, to turn an HTTP date into a delay
     */
    static Optional<Duration> retryAfter(HttpHeaders headers, Instant now) {
        Optional<String> ms = headers.firstValue("retry-after-ms");
        if (ms.isPresent()) {
            Optional<Duration> d = parseNumber(ms.get(), 1_000_000L);
            if (d.isPresent()) {
                return d;
            }
        }
        Optional<String> ra = headers.firstValue("retry-after");
        if (ra.isEmpty()) {
            return Optional.empty();
        }
        String value = ra.get().trim();
        Optional<Duration> seconds = parseNumber(value, 1_000_000_000L);
        if (seconds.isPresent()) {
            return seconds;
        }
        try {
            Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
            Duration d = Duration.between(now, at);
            return Optional.of(d.isNegative() ? Duration.ZERO : d);
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static Optional<Duration> parseNumber(String value, long nanosPerUnit) {
        String v = value.trim();
        if (!NUMBER.matcher(v).matches()) {
            return Optional.empty();
        }
        // Clamp absurd values; the caller caps the delay far below this anyway.
        double nanos = Math.min(Double.parseDouble(v) * nanosPerUnit, (double) Duration.ofDays(1).toNanos());
        return Optional.of(Duration.ofNanos((long) nanos));
    }
}
