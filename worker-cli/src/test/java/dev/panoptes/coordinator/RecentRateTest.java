package dev.panoptes.coordinator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The progress bar's rate over the last window, from the samples the console thread takes. */
class RecentRateTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void oneSampleHasNoRateAndASteadyPaceIsItself() {
        RecentRate rate = new RecentRate();

        assertThat(rate.update(5 * SECOND, 100)).isZero();
        for (int i = 1; i <= 100; i++) {
            assertThat(rate.update(5 * SECOND + i * SECOND / 5, 100 + 2L * i)).isCloseTo(10.0, within(1e-9));
        }
    }

    @Test
    void theRateForgetsWhatIsOlderThanTheWindow() {
        RecentRate rate = new RecentRate();
        long t = 0;
        long count = 0;
        rate.update(t, count);
        // A slow start (the first workers connecting), then a pace of 100 a second.
        for (int i = 0; i < 30; i++) {
            rate.update(t += SECOND, count += 1);
        }
        double r = 0;
        for (int i = 0; i < 5 * (RecentRate.WINDOW_SECONDS + 1); i++) {
            r = rate.update(t += SECOND / 5, count += 20);
        }
        assertThat(r).isCloseTo(100.0, within(1e-9));
    }

    @Test
    void nothingForAWindowIsNoRate() {
        RecentRate rate = new RecentRate();
        long t = 0;
        rate.update(t, 0);
        rate.update(t += SECOND, 50);
        double r = 0;
        for (int i = 0; i < 5 * (RecentRate.WINDOW_SECONDS + 1); i++) {
            r = rate.update(t += SECOND / 5, 50);
        }
        assertThat(r).isZero();
    }
}
