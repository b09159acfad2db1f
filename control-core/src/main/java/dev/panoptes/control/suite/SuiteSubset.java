package dev.panoptes.control.suite;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.panoptes.control.Vignette;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which of a suite's vignettes a run asks, and in which order: the vignettes named by
 * {@code sampleIds} (all when there are none), in an order shuffled by {@code shuffleSeed} (suite
 * order when there is none), then the first {@code limit} of them (all when there is none).
 * {@link #apply} makes the subset {@link Suite} that {@link JobPlan} then cuts into jobs.
 *
 * <p><b>Part of the run's identity.</b> A subset asks other questions than the whole suite, so it
 * makes another run: {@link RunManifest#of(String, String, Suite, List, dev.panoptes.control.SpecParams,
 * int, String, String, int, String, SuiteSubset)} records it, and its run id covers it, so that
 * a subset never merges with the full run nor with another subset. The subset suite keeps the
 * file's content digest ({@link Suite#sha256()}): the file is the same, the subset says which of
 * it is asked. {@link #ALL} leaves the run id as it is without a subset.
 *
 * <p><b>Deterministic.</b> The shuffled order does not depend on the JVM, the machine or the order
 * of the suite's lines: each vignette is ranked by the SHA-256 of the seed and its id, so that
 * the same seed gives the same order everywhere, and a vignette keeps its rank when others are
 * added to the file.
 *
 * <p>Immutable ({@code sampleIds} is copied, sorted, each id once: their order on a command line
 * does not matter): any thread.
 *
 * @param sampleIds   the ids of the vignettes to ask, sorted and distinct; empty for every vignette
 * @param shuffleSeed the seed of the order, or null for suite order
 * @param limit       the most vignettes to ask, taken first after the shuffle, at least 1; or null
 *                    for no limit
 */
@JsonPropertyOrder({"sampleIds", "shuffleSeed", "limit"})
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record SuiteSubset(List<String> sampleIds, Long shuffleSeed, Integer limit) {
    /** Every vignette, in suite order: no subset. */
    public static final SuiteSubset ALL = new SuiteSubset(List.of(), null, null);

    /** @throws IllegalArgumentException when the limit is below 1, or an id is null or blank */
    public SuiteSubset {
        TreeSet<String> ids = new TreeSet<>();
        for (String id : sampleIds == null ? List.<String>of() : sampleIds) {
            if (id == null || id.isBlank()) {
                throw new IllegalArgumentException("a sample id must not be empty");
            }
            ids.add(id);
        }
        sampleIds = List.copyOf(ids);
        if (limit != null && limit < 1) {
            throw new IllegalArgumentException("a subset's limit must be at least 1, got " + limit);
        }
    }

    /** The first {@code limit} vignettes in suite order. */
    public static SuiteSubset first(int limit) {
        return new SuiteSubset(List.of(), null, limit);
    }

    /** The vignettes with these ids, in suite order. */
    public static SuiteSubset ofIds(Collection<String> ids) {
        return new SuiteSubset(List.copyOf(ids), null, null);
    }

    /** This subset, its order shuffled by {@code seed}. */
    public SuiteSubset shuffled(long seed) {
        return new SuiteSubset(sampleIds, seed, limit);
    }

    /** This subset, at most {@code n} vignettes of it. */
    public SuiteSubset limited(int n) {
        return new SuiteSubset(sampleIds, shuffleSeed, n);
    }

    /** True when this is {@link #ALL}: every vignette in suite order. */
    @JsonIgnore
    public boolean isAll() {
        return sampleIds.isEmpty() && shuffleSeed == null && limit == null;
    }

    /**
     * The suite as this subset asks it: same name and content digest, the chosen vignettes in the
     * subset's order, each with its file line.
     *
     * @throws UnknownIdsException when a sample id names no vignette of the suite (all of them named)
     */
    public Suite apply(Suite suite) {
        if (isAll()) {
            return suite;
        }
        List<Integer> chosen = chosenIndexes(suite);
        List<Vignette> vignettes = new ArrayList<>(chosen.size());
        List<Integer> lines = new ArrayList<>(suite.lines().isEmpty() ? 0 : chosen.size());
        for (int i : chosen) {
            vignettes.add(suite.vignettes().get(i));
            suite.lineOf(i).ifPresent(lines::add);
        }
        return suite.withVignettes(vignettes, lines);
    }

    private List<Integer> chosenIndexes(Suite suite) {
        List<Vignette> all = suite.vignettes();
        List<Integer> chosen = new ArrayList<>();
        if (sampleIds.isEmpty()) {
            for (int i = 0; i < all.size(); i++) {
                chosen.add(i);
            }
        } else {
            Map<String, Integer> byId = new HashMap<>(all.size() * 2);
            for (int i = 0; i < all.size(); i++) {
                byId.put(all.get(i).id(), i);
            }
            List<String> unknown = new ArrayList<>();
            for (String id : sampleIds) {
                Integer at = byId.get(id);
                if (at == null) {
                    unknown.add(id);
                } else {
                    chosen.add(at);
                }
            }
            if (!unknown.isEmpty()) {
                throw new UnknownIdsException(suite.name(), unknown);
            }
            chosen.sort(Comparator.naturalOrder());
        }
        if (shuffleSeed != null) {
            Map<Integer, byte[]> rank = new HashMap<>(chosen.size() * 2);
            for (int i : chosen) {
                rank.put(i, RunManifest.sha256((shuffleSeed + "\n" + all.get(i).id()).getBytes(StandardCharsets.UTF_8)));
            }
            // Ids are distinct within a suite, so ranks tie only on a SHA-256 collision: suite order then.
            chosen.sort(Comparator.<Integer, byte[]>comparing(rank::get, Arrays::compareUnsigned)
                    .thenComparing(Comparator.naturalOrder()));
        }
        return limit == null || limit >= chosen.size() ? chosen : chosen.subList(0, limit);
    }

    /**
     * This subset for people, such as {@code "3 sample ids, shuffled (seed 7), first 10"}; {@code "all"}
     * for {@link #ALL}.
     */
    public String describe() {
        if (isAll()) {
            return "all";
        }
        List<String> parts = new ArrayList<>(3);
        if (!sampleIds.isEmpty()) {
            parts.add(sampleIds.size() == 1 ? "sample id " + sampleIds.get(0) : sampleIds.size() + " sample ids");
        }
        if (shuffleSeed != null) {
            parts.add("shuffled (seed " + shuffleSeed + ")");
        }
        if (limit != null) {
            parts.add("first " + limit);
        }
        return String.join(", ", parts);
    }

    /**
     * Sample ids that name no vignette of the suite: the run would not ask what its command
     * names. {@link #unknown()} lists them all; the message names the first few.
     */
    public static final class UnknownIdsException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private static final int SHOWN = 10;

        /** The ids that name no vignette, sorted. */
        private final List<String> unknown;

        public UnknownIdsException(String suite, List<String> unknown) {
            super(message(suite, unknown));
            this.unknown = List.copyOf(unknown);
        }

        /** Every id that names no vignette of the suite, sorted. */
        public List<String> unknown() {
            return unknown;
        }

        private static String message(String suite, List<String> unknown) {
            List<String> shown = unknown.subList(0, Math.min(SHOWN, unknown.size()));
            return "suite " + suite + " has no vignette with the id" + (unknown.size() == 1 ? " " : "s ")
                    + String.join(", ", shown)
                    + (unknown.size() > SHOWN ? " ... and " + (unknown.size() - SHOWN) + " more" : "");
        }
    }
}
