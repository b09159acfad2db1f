package dev.panoptes.control;

import java.util.Objects;

/** Constructor checks shared by the model records; each failure names the record and field. */
final class Checks {
    private Checks() {
    }

    static <T> T notNull(T value, String what) {
        return Objects.requireNonNull(value, () -> what + " must not be null");
    }

    static String notEmpty(String value, String what) {
        notNull(value, what);
        if (value.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        return value;
    }

    static String length(String value, int max, String what) {
        notEmpty(value, what);
        if (value.length() > max) {
            throw new IllegalArgumentException(
                    what + " must be at most " + max + " characters, got " + value.length());
        }
        return value;
    }

    static long notNegative(long value, String what) {
        if (value < 0) {
            throw new IllegalArgumentException(what + " must not be negative, got " + value);
        }
        return value;
    }
}
