package dev.panoptes.eval.http;

import dev.panoptes.control.FailureScope;

import javax.net.ssl.SSLException;
import java.net.ConnectException;
import java.io.InterruptedIOException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The pure parts of the failure policy: whose fault a status or a transport failure is (and so
 * whether to retry it), how long to wait. Static and stateless: any thread; {@link Diagnosis}
 * and {@link RetryPolicy} apply it to a call's attempts, {@link ModelApiCheck} to its probes.
 */
final class Retries {
    /** A non-negative decimal number: what delta-seconds and milliseconds headers look like. */
    private static final Pattern NUMBER = Pattern.compile("\\d{1,12}(\\.\\d{1,9})?");

    private Retries() {
    }

    /**
     * Who is at fault when the model API answers {@code status} (not 2xx):
     * <ul>
     *   <li>{@link FailureScope#TRANSIENT}, worth retrying: 408 (request timeout), 409 (conflict,
     *       e.g. a lock), 429 unless the account is out of quota, and every 5xx;</li>
     *   <li>{@link FailureScope#WORKER}, since another worker, with its own URL, key and server,
     *       may well succeed: redirects (the base URL is wrong, and redirects are not followed),
     *       401 and 403 (the key), 404 (the base URL, or a model name the server does not serve:
     *       vLLM answers 404 for an unknown model), 405 (the base URL points at something that
     *       is not the API), 429 for {@code insufficient_quota} (this worker's account), and any
     *       status outside 300 to 599 (the server does not speak HTTP as expected);</li>
     *   <li>{@link FailureScope#JOB}, since the same request fails anywhere: every other 4xx,
     *       such as 400 (invalid request, context length exceeded, content filter), 413 and
     *       422.</li>
     * </ul>
     *
     * @param error the error envelope of the response, or null
     */
    static FailureScope scopeOf(int status, ApiError error) {
        if (status == 429) {
            return error != null && error.isInsufficientQuota() ? FailureScope.WORKER : FailureScope.TRANSIENT;
        }
        if (status == 408 || status == 409 || (status >= 500 && status <= 599)) {
            return FailureScope.TRANSIENT;
        }
        if (status == 401 || status == 403 || status == 404 || status == 405) {
            return FailureScope.WORKER;
        }
        if (status >= 400 && status <= 499) {
            return FailureScope.JOB;
        }
        return FailureScope.WORKER;
    }

    /**
     * Who is at fault when an exchange failed without an HTTP answer, {@code failure} being what
     * the HTTP client failed with:
     * <ul>
     *   <li>{@link FailureScope#WORKER}: the host name does not resolve ({@link UnknownHostException}
     *       or, as the JDK's HTTP client reports it, {@link UnresolvedAddressException}, anywhere
     *       in the cause chain), TLS fails ({@link SSLException} or a subclass anywhere in the
     *       chain: a wrong scheme, an untrusted certificate), or the connection is refused
     *       ({@link ConnectException} that is not a timeout): this worker's URL or its server is
     *       wrong or down, and other workers' may not be;</li>
     *   <li>{@link FailureScope#TRANSIENT}: everything else, such as connect and request timeouts
     *       (a {@link TimeoutException}, an {@link InterruptedIOException} such as Apache
     *       HttpClient's {@code ConnectTimeoutException}, or the JDK client's
     *       {@link HttpTimeoutException}) and connections reset or closed mid-answer.</li>
     * </ul>
     */
    static FailureScope transportScope(Throwable failure) {
        if (isDnsFailure(failure) || isTlsFailure(failure)) {
            return FailureScope.WORKER;
        }
        // A connect timeout may be reported with a ConnectException as its cause (the JDK's
        // client does): a timeout is the moment's fault, so it is tested first.
        if (failure instanceof HttpTimeoutException || failure instanceof InterruptedIOException
                || failure instanceof TimeoutException) {
            return FailureScope.TRANSIENT;
        }
        return inChain(failure, ConnectException.class) != null ? FailureScope.WORKER : FailureScope.TRANSIENT;
    }

    /** True when the cause chain says a host name did not resolve. */
    static boolean isDnsFailure(Throwable failure) {
        return inChain(failure, UnknownHostException.class) != null
                || inChain(failure, UnresolvedAddressException.class) != null;
    }

    /** True when the cause chain holds a TLS failure. */
    static boolean isTlsFailure(Throwable failure) {
        return inChain(failure, SSLException.class) != null;
    }

    /** The first throwable of {@code type} in the cause chain of {@code t}, itself included, or null. */
    static <T extends Throwable> T inChain(Throwable t, Class<T> type) {
        int depth = 0;
        for (Throwable c = t; c != null && depth < 32; c = c.getCause(), depth++) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
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
     * @param headers the first value of a response header by name, case-insensitive
     * @param now     the current time, to turn an HTTP date into a delay
     */
    static Optional<Duration> retryAfter(Function<String, Optional<String>> headers, Instant now) {
        Optional<String> ms = headers.apply("retry-after-ms");
        if (ms.isPresent()) {
            Optional<Duration> d = parseNumber(ms.get(), 1_000_000L);
            if (d.isPresent()) {
                return d;
            }
        }
        Optional<String> ra = headers.apply("retry-after");
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
