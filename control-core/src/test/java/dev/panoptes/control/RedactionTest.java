package dev.panoptes.control;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedactionTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = ' ', value = {
        "http://user:secret@127.0.0.1:8000/v1?api-key=SECRET http://127.0.0.1:8000/v1",
        "https://api.example.com/v1?key=SECRET https://api.example.com/v1",
        "https://api.example.com/v1/?token=SECRET&x=1#frag https://api.example.com/v1/",
        "http://user@host/v1 http://host/v1",
        "http://us%40er:p%3Ass@host:80/v1 http://host:80/v1",
        // '@' in the password, unencoded: the user info ends at the last '@' of the authority.
        "http://user:p@ss@host/v1 http://host/v1",
        "http://[::1]:8000/v1?key=SECRET http://[::1]:8000/v1",
        "http://user:secret@[::1]:8000 http://[::1]:8000",
        "http://host:8000/v1 http://host:8000/v1",
        // An '@' in the path is not user info.
        "http://host/models/m@2024 http://host/models/m@2024",
        // Meant as URLs, without a scheme.
        "localhost:8000/v1?key=SECRET localhost:8000/v1",
        "user:secret@localhost:8000/v1 localhost:8000/v1",
        "http:///v1?key=SECRET http:///v1",
        "HTTP://U:S@Host/V1 HTTP://Host/V1",
    })
    void keepsSchemeHostPortAndPathOnly(String given, String expected) {
        assertThat(Redaction.url(given)).isEqualTo(expected);
        assertThat(Redaction.url(Redaction.url(given))).as("idempotent").isEqualTo(expected);
    }

    @Test
    void aUrlThatDoesNotParseIsRedactedToo() {
        assertThat(Redaction.url("http://user:se cret@host/v1?key=SE CRET")).isEqualTo("http://host/v1");
        assertThat(Redaction.url(null)).isNull();
        assertThat(Redaction.url("")).isEmpty();
    }

    @Test
    void redactsEveryUrlInFreeTextAndNothingElse() {
        assertThat(Redaction.urlsIn("calls http://u:SECRET@a:1/v1?key=SECRET and https://b/v2#x then stops"))
                .isEqualTo("calls http://a:1/v1 and https://b/v2 then stops");
        assertThat(Redaction.urlsIn("model a?b@c")).isEqualTo("model a?b@c");
        assertThat(Redaction.urlsIn(null)).isNull();
    }

    @Test
    void redactsUrlsInLabelValuesKeepingKeysAndOrder() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("model", "llama?3");
        labels.put("endpoint", "http://user:secret@127.0.0.1:8000/v1?api-key=SECRET");
        labels.put("zone", "eu-1");
        Map<String, String> redacted = Redaction.labels(labels);
        assertThat(redacted).containsExactly(Map.entry("model", "llama?3"),
                Map.entry("endpoint", "http://127.0.0.1:8000/v1"), Map.entry("zone", "eu-1"));
        assertThat(redacted.toString()).doesNotContain("secret").doesNotContain("SECRET");
        assertThatThrownBy(() -> redacted.put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
        assertThat(Redaction.labels(null)).isEmpty();
    }
}
