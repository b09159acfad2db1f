package dev.panoptes.bench.harness;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The summary BENCHMARKS.md reports for a figure measured several times: the median, with the
 * minimum and maximum as the spread. Immutable.
 *
 * @param median the median (the mean of the middle two for an even count)
 * @param min    the smallest run
 * @param max    the largest run
 * @param runs   how many runs
 */
public record Stats(double median, double min, double max, int runs) {
    /** @throws IllegalArgumentException when there are no values */
    public static Stats of(double... values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no runs to summarise");
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        return new Stats(median, sorted[0], sorted[n - 1], n);
    }

    public static Stats of(List<? extends Number> values) {
        double[] array = new double[values.size()];
        for (int i = 0; i < array.length; i++) {
            array[i] = values.get(i).doubleValue();
        }
        return of(array);
    }

    /** "median (min-max)" with the given number of decimals. */
    public String format(int decimals) {
        String f = "%." + decimals + "f";
        return String.format(Locale.ROOT, f + " (" + f + "-" + f + ")", median, min, max);
    }

    /** "median (min-max)" with thousands separators and no decimals, for rates. */
    public String formatRate() {
        return String.format(Locale.ROOT, "%,.0f (%,.0f-%,.0f)", median, min, max);
    }

    /** The spread as a fraction of the median: (max - min) / median. */
    public double relativeSpread() {
        return median == 0 ? 0 : (max - min) / median;
    }
}
