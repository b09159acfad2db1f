package dev.panoptes.coordinator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The live progress bar's text, as a pure function of the counts and the terminal's width. */
class ProgressBarTest {
    private static ProgressBar.Snapshot counts(long done, long total, long failed, long cached, double cost) {
        return new ProgressBar.Snapshot(done, total, "answer", failed, cached, cost, 25, 3, 0);
    }

    @Test
    void aWideTerminalShowsTheBarAndEveryCount() {
        String line = ProgressBar.render(counts(250, 1000, 3, 40, 0.42), 120);

        assertThat(line).isEqualTo("[##########------------------------------] 250/1000 answers  25%  25/s  ETA 30s"
                + "  3 failed  40 cached  $0.42  3 workers");
        assertThat(line.length()).isLessThan(120);
    }

    @Test
    void withoutACacheOrPricesNeitherCountIsShownAndNoFailuresSaysNothing() {
        String line = ProgressBar.render(counts(250, 1000, 0, -1, Double.NaN), 120);

        assertThat(line).endsWith("250/1000 answers  25%  25/s  ETA 30s  3 workers")
                .doesNotContain("cached", "$", "failed");
    }

    @Test
    void everyLineIsShorterThanTheTerminalWhateverItsWidth() {
        ProgressBar.Snapshot s = counts(123_456, 1_000_000, 17, 99_000, 1234.5);
        for (int width = 1; width <= 200; width++) {
            assertThat(ProgressBar.render(s, width).length()).as("width %d", width).isLessThan(width);
        }
    }

    @Test
    void aNarrowTerminalKeepsTheCountFirstAndDropsTheBarThenTheLeastImportantParts() {
        ProgressBar.Snapshot s = counts(250, 1000, 3, 40, 0.42);

        assertThat(ProgressBar.render(s, 40)).isEqualTo("250/1000 answers  25%  25/s  ETA 30s");
        assertThat(ProgressBar.render(s, 24)).isEqualTo("250/1000 answers  25%");
        assertThat(ProgressBar.render(s, 12)).isEqualTo("250/1000 an");
        assertThat(ProgressBar.render(s, 80)).isEqualTo("[###---------] 250/1000 answers  25%  25/s  ETA 30s  3 failed"
                + "  40 cached  $0.42");
        assertThat(ProgressBar.render(s, 60)).isEqualTo("[##--------] 250/1000 answers  25%  25/s  ETA 30s  3 failed");
        assertThat(ProgressBar.render(s, 60).indexOf(']')).as("a bar of at least the minimum")
                .isGreaterThanOrEqualTo(ProgressBar.MIN_BAR + 1);
    }

    @Test
    void anUnknownWidthIsTakenAsEighty() {
        ProgressBar.Snapshot s = counts(1, 2, 0, -1, Double.NaN);

        assertThat(ProgressBar.render(s, 0)).isEqualTo(ProgressBar.render(s, 80));
    }

    @Test
    void theBarFillsByShareRoundedDown() {
        assertThat(ProgressBar.bar(0, 10)).isEqualTo("[----------]");
        assertThat(ProgressBar.bar(0.19, 10)).isEqualTo("[#---------]");
        assertThat(ProgressBar.bar(1, 10)).isEqualTo("[##########]");
        assertThat(ProgressBar.bar(1.5, 10)).isEqualTo("[##########]");
    }

    @Test
    void etaReadsAsSecondsMinutesOrHours() {
        assertThat(ProgressBar.eta(-1)).isEqualTo("-");
        assertThat(ProgressBar.eta(Double.NaN)).isEqualTo("-");
        assertThat(ProgressBar.eta(0.4)).isEqualTo("0s");
        assertThat(ProgressBar.eta(42)).isEqualTo("42s");
        assertThat(ProgressBar.eta(185)).isEqualTo("3m05s");
        assertThat(ProgressBar.eta(7380)).isEqualTo("2h03m");
        assertThat(ProgressBar.eta(100 * 3600)).isEqualTo("100h00m");
    }

    @Test
    void rateKeepsTwoOrThreeFigures() {
        assertThat(ProgressBar.rate(0)).isEqualTo("0.0/s");
        assertThat(ProgressBar.rate(4.24)).isEqualTo("4.2/s");
        assertThat(ProgressBar.rate(42.4)).isEqualTo("42/s");
        assertThat(ProgressBar.rate(4_240)).isEqualTo("4.2k/s");
        assertThat(ProgressBar.rate(42_400)).isEqualTo("42k/s");
    }

    @Test
    void costShowsCentsOrFourPlacesBelowACent() {
        assertThat(ProgressBar.cost(0)).isEqualTo("$0.00");
        assertThat(ProgressBar.cost(0.0042)).isEqualTo("$0.0042");
        assertThat(ProgressBar.cost(12.345)).isEqualTo("$12.35");
    }

    @Test
    void theEtaIsWhatIsLeftAtTheRateAndUnknownWithoutOne() {
        ProgressBar.Snapshot going = new ProgressBar.Snapshot(600, 1000, "answer", 0, -1, Double.NaN, 10, 1, 0);
        ProgressBar.Snapshot stalled = new ProgressBar.Snapshot(600, 1000, "answer", 0, -1, Double.NaN, 0, 1, 0);

        assertThat(going.etaSeconds()).isEqualTo(40.0);
        assertThat(ProgressBar.render(going, 200)).contains("600/1000 answers  60%  10/s  ETA 40s  1 worker");
        assertThat(ProgressBar.render(stalled, 200)).contains("0.0/s  ETA -");
    }

    @Test
    void aRunWithNothingToDoIsWhole() {
        ProgressBar.Snapshot empty = new ProgressBar.Snapshot(0, 0, "job", 0, -1, Double.NaN, 0, 0, 0);

        assertThat(ProgressBar.render(empty, 80)).contains("0/0 jobs 100%  0.0/s  ETA -  0 workers");
    }
}
