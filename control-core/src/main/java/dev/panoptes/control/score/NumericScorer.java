package dev.panoptes.control.score;

import java.util.OptionalDouble;
import java.util.regex.Pattern;

/**
 * Specs {@code numeric}, {@code numeric:TOL} and {@code numeric:TOL%}: the last number in the
 * answer (models explain themselves first) is within a tolerance of the number in the expected
 * answer. Both are read by {@link NumberExtraction}.
 *
 * <p>The tolerance is absolute ({@code |answer - expected| <= TOL}, default 1e-6) or, with a
 * trailing %, relative to the expected value ({@code |answer - expected| <= TOL/100 * |expected|},
 * so an expected 0 must be matched exactly).
 *
 * <p>Immutable and thread-safe.
 */
final class NumericScorer extends SpecScorer {
    static final String NAME = "numeric";
    static final double DEFAULT_TOLERANCE = 1e-6;
    private static final Pattern DECIMAL = Pattern.compile("(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?");

    /** The tolerance as written (with its % when relative), for explanations. */
    private final String toleranceText;
    private final double tolerance;
    private final boolean relative;

    private NumericScorer(String spec, String toleranceText, double tolerance, boolean relative) {
        super(spec);
        this.toleranceText = toleranceText;
        this.tolerance = tolerance;
        this.relative = relative;
    }

    /** {@code numeric}: absolute tolerance 1e-6. */
    static NumericScorer withDefaultTolerance() {
        return new NumericScorer(NAME, "1e-6", DEFAULT_TOLERANCE, false);
    }

    /**
     * {@code numeric:TOL} or {@code numeric:TOL%}.
     *
     * @param tolerance the text after the colon
     * @throws IllegalArgumentException when it is not a non-negative decimal with an optional
     *                                  trailing %
     */
    static NumericScorer parse(String tolerance) {
        boolean relative = tolerance.endsWith("%");
        String digits = relative ? tolerance.substring(0, tolerance.length() - 1) : tolerance;
        // Double.parseDouble alone would also take "NaN", "Infinity", "0x1p3" and "1d".
        if (!DECIMAL.matcher(digits).matches() || !Double.isFinite(Double.parseDouble(digits))) {
            throw new IllegalArgumentException("tolerance '" + tolerance
                    + "' is not a non-negative decimal such as 0.01, 1e-3 or 5%");
        }
        return new NumericScorer(NAME + ":" + tolerance, tolerance, Double.parseDouble(digits), relative);
    }


    @Override
    Score compare(String answer, String expected) {
        OptionalDouble want = NumberExtraction.lastNumber(expected);
        if (want.isEmpty()) {
            return unusableExpected(expected, "holds no number");
        }
        OptionalDouble got = NumberExtraction.lastNumber(answer);
        if (got.isEmpty()) {
            return new Score(0, "no number in the answer");
        }
        double allowed = relative ? tolerance / 100 * Math.abs(want.getAsDouble()) : tolerance;
        boolean correct = Math.abs(got.getAsDouble() - want.getAsDouble()) <= allowed;
        String read = "read " + NumberExtraction.format(got.getAsDouble());
        return new Score(correct ? 1 : 0, correct ? read
                : read + ", expected " + NumberExtraction.format(want.getAsDouble())
                + " within " + toleranceText);
    }
}
