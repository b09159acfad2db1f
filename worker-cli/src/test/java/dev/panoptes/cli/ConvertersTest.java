package dev.panoptes.cli;

import dev.panoptes.worker.WorkerIds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The reusable option converters and the worker id rules. */
class ConvertersTest {
    @ParameterizedTest
    @CsvSource({
        "10.0.0.5:7070, 10.0.0.5, 7070",
        "coord.example.com:1, coord.example.com, 1",
        "' localhost:65535 ', localhost, 65535",
        "[::1]:7070, ::1, 7070",
        "[fe80::1%eth0]:80, fe80::1%eth0, 80"
    })
    void readsHostAndPortWithoutResolvingTheHost(String text, String host, int port) {
        InetSocketAddress address = HostPortConverter.parse(text);

        assertThat(address.getHostString()).isEqualTo(host);
        assertThat(address.getPort()).isEqualTo(port);
        assertThat(address.isUnresolved()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "localhost", ":7070", "host:", "::1:7070", "[::1]7070", "[::1", "a:b:c"})
    void refusesWhatIsNotHostColonPort(String text) {
        assertThatThrownBy(() -> HostPortConverter.parse(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageStartingWith("expected HOST:PORT");
    }

    @ParameterizedTest
    @CsvSource({
        "500ms, PT0.5S",
        "5s, PT5S",
        "5S, PT5S",
        "2m, PT2M",
        "1h, PT1H",
        "1d, PT24H",
        "PT5S, PT5S",
        "pt0.25s, PT0.25S",
        "' 30s ', PT30S"
    })
    void readsHumanAndIsoDurations(String text, String iso) {
        assertThat(DurationConverter.parse(text)).isEqualTo(Duration.parse(iso));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "5", "five seconds", "5 sec", "-5s", "PT", "1.5s"})
    void refusesWhatIsNotADuration(String text) {
        assertThatThrownBy(() -> DurationConverter.parse(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageStartingWith("expected a duration such as 500ms, 5s, 2m, 1h or PT5S");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "0ms", "PT0S", "PT-5S"})
    void refusesDurationsThatAreNotPositive(String text) {
        assertThatThrownBy(() -> DurationConverter.parse(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageStartingWith("must be a positive duration");
    }

    @Test
    void zeroIsADurationWhereZeroMeansNoWaitAndAnythingElseReadsAsBefore() {
        DurationConverter.OrZero orZero = new DurationConverter.OrZero();
        for (String zero : List.of("0", "0s", "0ms", " 00 m")) {
            assertThat(orZero.convert(zero)).as(zero).isZero();
        }
        assertThat(orZero.convert("35s")).isEqualTo(Duration.ofSeconds(35));
        assertThatThrownBy(() -> orZero.convert("-1s")).hasMessageContaining("expected a duration such as");
        assertThatThrownBy(() -> orZero.convert("5")).hasMessageContaining("got '5'");
    }

    @Test
    void formatsDurationsTheWayItReadsThem() {
        for (Duration d : new Duration[] {Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofMinutes(2),
                Duration.ofMillis(1500)}) {
            assertThat(DurationConverter.parse(DurationConverter.format(d))).isEqualTo(d);
        }
        assertThat(DurationConverter.format(Duration.ofSeconds(30))).isEqualTo("30s");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://localhost:8000/v1", "https://api.openai.com/v1", "HTTP://10.0.0.7/",
        "http://[::1]:8000/v1"})
    void readsHttpBaseUrls(String text) {
        assertThat(HttpUrlConverter.parse(text)).isEqualTo(URI.create(text));
    }

    @Test
    void refusesAUrlWithAPasswordWithoutRepeatingIt() {
        assertThatThrownBy(() -> HttpUrlConverter.parse("http://user:hunter2@localhost:8000/v1"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("must not contain a user name or password")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    void checksWorkerIdsAgainstTheProtocolsPattern() {
        assertThat(WorkerIds.isValid("gpu-1.example:7@rack_2")).isTrue();
        assertThat(WorkerIds.isValid("x".repeat(128))).isTrue();
        assertThat(WorkerIds.isValid("x".repeat(129))).isFalse();
        assertThat(WorkerIds.isValid("")).isFalse();
        assertThat(WorkerIds.isValid("has space")).isFalse();
        assertThat(WorkerIds.isValid("caf\u00e9")).isFalse();
        assertThatThrownBy(() -> WorkerIds.requireValid("a/b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("worker id must be 1 to 128 characters from [A-Za-z0-9._:@-], got 'a/b'");
    }

    @Test
    void makesTheDefaultIdFromTheHostNameAndPidValid() {
        assertThat(WorkerIds.fromHostAndPid("gpu-box.lan", 4242)).isEqualTo("gpu-box.lan-4242");
        assertThat(WorkerIds.fromHostAndPid("Jane's MacBook Pro", 7)).isEqualTo("Jane-s-MacBook-Pro-7");
        assertThat(WorkerIds.fromHostAndPid("\u00fcber", 7)).isEqualTo("-ber-7");
        assertThat(WorkerIds.fromHostAndPid(null, 7)).isEqualTo("worker-7");
        assertThat(WorkerIds.fromHostAndPid("!!!", 7)).isEqualTo("worker-7");
        String longId = WorkerIds.fromHostAndPid("h".repeat(300), 123456);
        assertThat(longId).hasSize(128).endsWith("h-123456");
        assertThat(WorkerIds.defaultId()).matches("[A-Za-z0-9._:@-]{1,128}")
                .endsWith("-" + ProcessHandle.current().pid());
    }

    @Test
    void aShareIsADecimalFromZeroToOneOrAPercentageAndAnythingElseSaysWhatIsWanted() {
        ShareConverter share = new ShareConverter();
        assertThat(share.convert("0.05")).isEqualTo(0.05);
        assertThat(share.convert(" 5% ")).isEqualTo(0.05);
        assertThat(share.convert("0")).isEqualTo(0.0);
        assertThat(share.convert("1")).isEqualTo(1.0);
        assertThatThrownBy(() -> share.convert("abc")).hasMessage("must be a share from 0 to 1 (such as 0.05) or a"
                + " percentage (5%), got 'abc'");
        assertThatThrownBy(() -> share.convert("2")).hasMessageContaining("must be from 0 to 1");
        assertThatThrownBy(() -> share.convert("150%")).hasMessageContaining("must be from 0 to 1");
        assertThatThrownBy(() -> share.convert("NaN")).hasMessageContaining("must be from 0 to 1");
    }

    @Test
    void aFrameLimitIsAWholeNumberOfBytesOfAtLeast64KiBOnEitherSide() {
        FrameBytesConverter frames = new FrameBytesConverter();
        assertThat(frames.convert("65536")).isEqualTo(65536);
        assertThat(frames.convert(" 33554432 ")).isEqualTo(33554432);
        assertThatThrownBy(() -> frames.convert("65535")).hasMessage("must be at least 65536 (64 KiB), got 65535");
        assertThatThrownBy(() -> frames.convert("16MiB")).hasMessage("must be a whole number of bytes, such as"
                + " 33554432 (32 MiB), got '16MiB'");
    }
}
