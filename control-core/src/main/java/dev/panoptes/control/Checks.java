package dev.panoptes.control;

/** Constructor checks shared by the model records; each failure names the record and field. */
final class Checks {
    private Checks() {
    }

    static <T> T notNull(T value, String what) {
        // No message supplier: a capturing lambda per call, on paths made a million times a run.
        if (value == null) {
            throw new NullPointerException(what + " must not be null");
        }
        return value;
    }

    /**
     * As {@link #notNull(Object, String)} for a field named "{@code what} {@code of}" (such as
     * "records of outcome" and the outcome's id): the name is joined only when the check fails,
     * since these checks run on every answer and job.
     */
    static <T> T notNull(T value, String what, Object of) {
        if (value == null) {
            throw new NullPointerException(what + " " + of + " must not be null");
        }
        return value;
    }

    /** As {@link #notNegative(long, String)}, the field named "{@code what} {@code of}" only when it fails. */
    static long notNegative(long value, String what, Object of) {
        if (value < 0) {
            throw new IllegalArgumentException(what + " " + of + " must not be negative, got " + value);
        }
        return value;
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
