package dev.panoptes.eval.http;

import dev.panoptes.control.FailureScope;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

class RetriesTest {
    private static final Instant NOW = Instant.parse("2024-01-01T00:00:00Z");

    /** Response headers as {@link Retries#retryAfter} reads them: by name, case-insensitive. */
    private static Function<String, Optional<String>> headers(String... nameValues) {
        Map<String, List<String>> map = new LinkedHashMap<>();
        for (int i = 0; i < nameValues.length; i += 2) {
            map.put(nameValues[i], List.of(nameValues[i + 1]));
        }
        return HttpHeaders.of(map, (k, v) -> true)::firstValue;
    }

    @Test
    void timeoutsConflictsRateLimitsAndServerErrorsAreTheMoments() {
        for (int status : new int[] {408, 409, 429, 500, 502, 503, 504, 599}) {
            assertThat(Retries.scopeOf(status, null)).as("status %d", status).isEqualTo(FailureScope.TRANSIENT);
        }
    }

    @Test
    void redirectsTheKeyAWrongUrlOrModelAndStrangeStatusesAreTheWorkers() {
        for (int status : new int[] {300, 301, 302, 307, 308, 401, 403, 404, 405, 101, 600, 999}) {
            assertThat(Retries.scopeOf(status, null)).as("status %d", status).isEqualTo(FailureScope.WORKER);
        }
    }

    @Test
    void everyOther4xxIsTheJobs() {
        for (int status : new int[] {400, 402, 406, 410, 411, 413, 415, 418, 422, 451, 499}) {
            assertThat(Retries.scopeOf(status, null)).as("status %d", status).isEqualTo(FailureScope.JOB);
        }
    }

    @Test
    void a429IsTheWorkersWhenItsAccountIsOutOfQuota() {
        assertThat(Retries.scopeOf(429, new ApiError("Rate limit reached", "requests", "rate_limit_exceeded")))
                .isEqualTo(FailureScope.TRANSIENT);
        assertThat(Retries.scopeOf(429, new ApiError("You exceeded your current quota", "insufficient_quota",
                "insufficient_quota"))).isEqualTo(FailureScope.WORKER);
        assertThat(Retries.scopeOf(429, new ApiError("quota", null, "insufficient_quota")))
                .isEqualTo(FailureScope.WORKER);
        assertThat(Retries.scopeOf(429, new ApiError("upstream said: insufficient_quota", null, "429")))
                .isEqualTo(FailureScope.WORKER);
    }

    @Test
    void refusedConnectionsAndDnsAndTlsFailuresAreTheWorkers() {
        // As the JDK's HttpClient reports them: a refusal and an unresolved name are both a
        // ConnectException without a message, told apart by the cause.
        Throwable refused = new ConnectException().initCause(new ClosedChannelException());
        Throwable unresolved = new ConnectException().initCause(new UnresolvedAddressException());
        Throwable unknownHost = new IOException("lookup failed", new UnknownHostException("no-such-host.example"));
        Throwable apacheRefused = new org.apache.hc.client5.http.HttpHostConnectException(
                "Connect to http://127.0.0.1:9 failed: Connection refused");
        Throwable handshake = new SSLHandshakeException("PKIX path building failed");
        Throwable plaintext = new IOException(new SSLException("Unrecognized SSL message, plaintext connection?"));

        for (Throwable t : List.of(refused, unresolved, unknownHost, handshake, plaintext, apacheRefused)) {
            assertThat(Retries.transportScope(t)).as("%s", t).isEqualTo(FailureScope.WORKER);
        }
        assertThat(Retries.isDnsFailure(unresolved)).isTrue();
        assertThat(Retries.isDnsFailure(unknownHost)).isTrue();
        assertThat(Retries.isDnsFailure(refused)).isFalse();
        assertThat(Retries.isTlsFailure(handshake)).isTrue();
        assertThat(Retries.isTlsFailure(plaintext)).isTrue();
        assertThat(Retries.isTlsFailure(refused)).isFalse();
    }

    @Test
    void timeoutsResetsAndOtherIoFailuresAreTheMoments() {
        // The JDK reports a connect timeout as a timeout caused by a ConnectException.
        Throwable connectTimeout = new HttpConnectTimeoutException("HTTP connect timed out")
                .initCause(new ConnectException("HTTP connect timed out"));
        Throwable requestTimeout = new HttpTimeoutException("request timed out");
        Throwable reset = new SocketException("Connection reset");
        Throwable closedEarly = new EOFException("EOF reached while reading");
        Throwable bug = new IllegalStateException("a bug in the HTTP stack");
        // As Apache HttpClient reports them, and as this package's own timer does.
        Throwable apacheConnectTimeout = new org.apache.hc.client5.http.ConnectTimeoutException(
                "Connect to http://10.0.0.1:8000 timed out");
        Throwable socketTimeout = new java.net.SocketTimeoutException("Read timed out");
        Throwable attemptTimeout = new java.util.concurrent.TimeoutException("no complete answer within 300 ms");

        for (Throwable t : List.of(connectTimeout, requestTimeout, reset, closedEarly, bug, apacheConnectTimeout,
                socketTimeout, attemptTimeout)) {
            assertThat(Retries.transportScope(t)).as("%s", t).isEqualTo(FailureScope.TRANSIENT);
        }
    }

    @Test
    void findsATypeAnywhereInACauseChainAndSurvivesALoop() {
        SSLException tls = new SSLException("deep");
        Throwable chain = new IOException(new RuntimeException(tls));
        assertThat(Retries.inChain(chain, SSLException.class)).isSameAs(tls);
        assertThat(Retries.inChain(chain, UnknownHostException.class)).isNull();

        Throwable a = new IOException("a");
        Throwable b = new IOException("b", a);
        a.initCause(b);
        assertThat(Retries.inChain(b, SSLException.class)).isNull();
    }

    @Test
    void backoffIsExponentialWithFullJitterUpToTheCap() {
        Duration base = Duration.ofMillis(500);
        Duration cap = Duration.ofSeconds(8);
        assertThat(Retries.backoff(1, base, cap, 0.0)).isEqualTo(Duration.ZERO);
        assertThat(Retries.backoff(1, base, cap, 0.5)).isEqualTo(Duration.ofMillis(250));
        assertThat(Retries.backoff(2, base, cap, 0.5)).isEqualTo(Duration.ofMillis(500));
        assertThat(Retries.backoff(3, base, cap, 0.5)).isEqualTo(Duration.ofSeconds(1));
        assertThat(Retries.backoff(5, base, cap, 0.5)).isEqualTo(Duration.ofSeconds(4));
        assertThat(Retries.backoff(6, base, cap, 0.5)).isEqualTo(Duration.ofSeconds(4));
        assertThat(Retries.backoff(1_000, base, cap, 0.999)).isLessThan(cap).isGreaterThan(Duration.ofMillis(7_990));
        assertThat(Retries.backoff(40, Duration.ofDays(1), Duration.ofDays(2), 0.5)).isEqualTo(Duration.ofDays(1));
        assertThat(Retries.backoff(3, Duration.ZERO, Duration.ZERO, 0.9)).isEqualTo(Duration.ZERO);
    }

    @Test
    void retryAfterInSecondsOrMilliseconds() {
        assertThat(Retries.retryAfter(headers("Retry-After", "2"), NOW)).contains(Duration.ofSeconds(2));
        assertThat(Retries.retryAfter(headers("retry-after", " 1.5 "), NOW)).contains(Duration.ofMillis(1_500));
        assertThat(Retries.retryAfter(headers("retry-after-ms", "250"), NOW)).contains(Duration.ofMillis(250));
        assertThat(Retries.retryAfter(headers("retry-after-ms", "250", "Retry-After", "9"), NOW))
                .contains(Duration.ofMillis(250));
        assertThat(Retries.retryAfter(headers("retry-after-ms", "soon", "Retry-After", "9"), NOW))
                .contains(Duration.ofSeconds(9));
        assertThat(Retries.retryAfter(headers("Retry-After", "0"), NOW)).contains(Duration.ZERO);
    }

    @Test
    void retryAfterAsAnHttpDate() {
        assertThat(Retries.retryAfter(headers("Retry-After", "Mon, 01 Jan 2024 00:00:05 GMT"), NOW))
                .contains(Duration.ofSeconds(5));
        assertThat(Retries.retryAfter(headers("Retry-After", "Sun, 31 Dec 2023 23:59:00 GMT"), NOW))
                .contains(Duration.ZERO);
    }

    @Test
    void ignoresMissingOrMalformedValues() {
        assertThat(Retries.retryAfter(headers(), NOW)).isEmpty();
        for (String bad : new String[] {"soon", "-1", "1e3", "NaN", "Infinity", "1d", "0x10", ""}) {
            assertThat(Retries.retryAfter(headers("Retry-After", bad), NOW)).as("'%s'", bad)
                    .isEqualTo(Optional.empty());
        }
    }
}
