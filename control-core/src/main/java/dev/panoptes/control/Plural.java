package dev.panoptes.control;

import java.util.Locale;
import java.util.Objects;

/**
 * A count with its noun, for messages people read: {@code "1 worker"}, {@code "2 workers"},
 * {@code "0 jobs"}. English rules only as far as the project's nouns need them: the plural is the
 * singular plus {@code s}, unless one is given. Stateless; any thread.
 */
public final class Plural {
    private Plural() {
    }

    /**
     * The count and its noun, {@code "1 job"} or {@code "3 jobs"}.
     *
     * @param n        the count; only exactly 1 (and -1) takes the singular
     * @param singular the noun for one, e.g. {@code "worker"}; not null or empty
     * @throws IllegalArgumentException when {@code singular} is empty
     */
    public static String of(long n, String singular) {
        return n + " " + noun(n, singular);
    }

    /**
     * The count and its noun when the plural is irregular, {@code "1 entry"} or {@code "2 entries"}.
     *
     * @throws IllegalArgumentException when either noun is empty
     */
    public static String of(long n, String singular, String plural) {
        return n + " " + noun(n, singular, plural);
    }

    /** The noun alone, as it goes with {@code n}: {@code "worker"} or {@code "workers"}. */
    public static String noun(long n, String singular) {
        return noun(n, singular, check(singular, "singular") + "s");
    }

    /** The noun alone, as it goes with {@code n}, with an irregular plural. */
    public static String noun(long n, String singular, String plural) {
        check(singular, "singular");
        check(plural, "plural");
        return Math.abs(n) == 1 ? singular : plural;
    }

    /** {@code "%,d"} grouping as in {@code "1,200 answers"}: the count formatted with thousands separators. */
    public static String grouped(long n, String singular) {
        return String.format(Locale.ROOT, "%,d", n) + " " + noun(n, singular);
    }

    private static String check(String noun, String what) {
        Objects.requireNonNull(noun, what);
        if (noun.isEmpty()) {
            throw new IllegalArgumentException("the " + what + " noun must not be empty");
        }
        return noun;
    }
}
