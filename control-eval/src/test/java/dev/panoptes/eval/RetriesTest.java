package dev.panoptes.eval;

import org.junit.jupiter.api.Test;

import java.net.http.HttpHeaders;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class RetriesTest {
    private static final Instant NOW = Instant.parse("2024-01-01T00:00:00Z");

    private static HttpHeaders headers(String... nameValues) {
        Map<String, List<String>> map = new LinkedHashMap<>();
        for (int i = 0; i < nameValues.length; i += 2) {
            map.put(nameValues[i], List.of(nameValues[i + 1]));
        }
        return HttpHeaders.of(map, (k, v) -> true);
    }

    @Test
    void retriesTimeoutsConflictsRateLimitsAndServerErrors() {
        for (int status : new int[] {408, 409, 429, 500, 502, 503, 504, 599}) {
            assertThat(Retries.isRetryableStatus(status, null)).as("status %d", status).isTrue();
        }
        for (int status : new int[] {301, 400, 401, 403, 404, 405, 413, 422}) {
            assertThat(Retries.isRetryableStatus(status, null)).as("status %d", status).isFalse();
        }
    }

    @Test
    void a429IsNotRetriedWhenTheAccountIsOutOfQuota() {
        assertThat(Retries.isRetryableStatus(429, new ApiError("Rate limit reached", "requests",
                "rate_limit_exceeded"))).isTrue();
        assertThat(Retries.isRetryableStatus(429, new ApiError("You exceeded your current quota",
                "insufficient_quota", "insufficient_quota"))).isFalse();
        assertThat(Retries.isRetryableStatus(429, new ApiError("quota", null, "insufficient_quota"))).isFalse();
        assertThat(Retries.isRetryableStatus(429, new ApiError("upstream said: insufficient_quota", null, "429")))
                .isFalse();
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
