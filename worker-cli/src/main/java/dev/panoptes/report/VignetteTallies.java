package dev.panoptes.report;

import dev.panoptes.control.stats.ClusterTotals;

import java.util.AbstractCollection;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * One model's figure scores per vignette, for {@link RunTally}: per vignette, in the order first
 * seen, the {@link ClusterTotals} of its scores (count, sum, mean, squared deviations, by the same
 * arithmetic), its passes (score 1), its group, and the totals without failed answers once it has
 * one. Kept in arrays, one slot a vignette, with no object per vignette: a million vignettes are a
 * few arrays the collector never walks, and a tally sized for them up front
 * ({@link #VignetteTallies(int)}) allocates nothing more as answers come (the coordinator counts
 * its summary as answers are stored: {@link LiveFigures}).
 *
 * <p>Not thread-safe: one thread adds, then reads.
 */
final class VignetteTallies {
    private String[] ids;
    /** Each id's hash, so that a probe that meets another id does not read its string. */
    private int[] hashes;
    private String[] groups;
    private int[] counts;
    private double[] sums;
    private double[] means;
    private double[] squares;
    private int[] passes;
    /** The totals without failed answers, null until the vignette has a failed answer (then they differ). */
    private ClusterTotals[] answered;
    private int size;
    /**
     * Open addressing by id hash (Fibonacci hashing: the sequential ids of a generated suite hash
     * to neighbours, which linear probing alone would pile up): slot index + 1, 0 for empty; at
     * most half full.
     */
    private int[] table;
    /** 32 - log2 of the table's length. */
    private int shift;

    /** @param expected how many vignettes to make room for now (more are made room for as they come) */
    VignetteTallies(int expected) {
        int capacity = Math.max(8, expected);
        ids = new String[capacity];
        hashes = new int[capacity];
        groups = new String[capacity];
        counts = new int[capacity];
        sums = new double[capacity];
        means = new double[capacity];
        squares = new double[capacity];
        passes = new int[capacity];
        answered = new ClusterTotals[capacity];
        table = new int[tableSize(capacity)];
        shift = Integer.numberOfLeadingZeros(table.length) + 1;
    }

    private static int tableSize(int capacity) {
        return Integer.highestOneBit(Math.max(4, capacity) * 2 - 1) << 1;
    }

    /** The number of vignettes. */
    int size() {
        return size;
    }

    /** How many vignettes there is room for before the arrays are made again, larger. */
    int capacity() {
        return ids.length;
    }

    /** True when no vignette was added. */
    boolean isEmpty() {
        return size == 0;
    }

    /** The vignette's slot, or -1 when it has none. */
    int indexOf(String id) {
        int hash = id.hashCode();
        int mask = table.length - 1;
        for (int h = home(hash); ; h = (h + 1) & mask) {
            int at = table[h];
            if (at == 0) {
                return -1;
            }
            if (hashes[at - 1] == hash && ids[at - 1].equals(id)) {
                return at - 1;
            }
        }
    }

    /** The vignette's slot, made (in group {@code group}) when it has none. */
    int slotOf(String id, String group) {
        int hash = id.hashCode();
        int mask = table.length - 1;
        int h = home(hash);
        for (; ; h = (h + 1) & mask) {
            int at = table[h];
            if (at == 0) {
                break;
            }
            if (hashes[at - 1] == hash && ids[at - 1].equals(id)) {
                return at - 1;
            }
        }
        if (size == ids.length) {
            grow();
            return slotOf(id, group);
        }
        int slot = size++;
        ids[slot] = id;
        hashes[slot] = hash;
        groups[slot] = group;
        table[h] = slot + 1;
        return slot;
    }

    /** Where a hash's probe starts: its product with 2^32 / the golden ratio, top bits. */
    private int home(int hash) {
        return (hash * 0x9E3779B9) >>> shift;
    }

    private void grow() {
        int capacity = ids.length * 2;
        ids = Arrays.copyOf(ids, capacity);
        hashes = Arrays.copyOf(hashes, capacity);
        groups = Arrays.copyOf(groups, capacity);
        counts = Arrays.copyOf(counts, capacity);
        sums = Arrays.copyOf(sums, capacity);
        means = Arrays.copyOf(means, capacity);
        squares = Arrays.copyOf(squares, capacity);
        passes = Arrays.copyOf(passes, capacity);
        answered = Arrays.copyOf(answered, capacity);
        table = new int[tableSize(capacity)];
        shift = Integer.numberOfLeadingZeros(table.length) + 1;
        int mask = table.length - 1;
        for (int slot = 0; slot < size; slot++) {
            int h = home(hashes[slot]);
            while (table[h] != 0) {
                h = (h + 1) & mask;
            }
            table[h] = slot + 1;
        }
    }

    /**
     * Counts a score of the vignette in slot {@code slot}: in its totals ({@link ClusterTotals#add},
     * the same arithmetic), its passes when it is 1, and in its totals without failed answers
     * unless {@code failed} (the first failed answer starts those, from the totals before it).
     */
    void add(int slot, double score, boolean failed) {
        if (failed) {
            if (answered[slot] == null) {
                // From now on the figure without failed answers differs from the figure.
                answered[slot] = totals(slot);
            }
        } else if (answered[slot] != null) {
            answered[slot].add(score);
        }
        int n = ++counts[slot];
        sums[slot] += score;
        double before = score - means[slot];
        means[slot] += before / n;
        squares[slot] += before * (score - means[slot]);
        if (score == 1.0) {
            passes[slot]++;
        }
    }

    String id(int slot) {
        return ids[slot];
    }

    String group(int slot) {
        return groups[slot];
    }

    int count(int slot) {
        return counts[slot];
    }

    double sum(int slot) {
        return sums[slot];
    }

    int passes(int slot) {
        return passes[slot];
    }

    /** The vignette's totals, as an object of their own (a copy). */
    ClusterTotals totals(int slot) {
        return ClusterTotals.of(counts[slot], sums[slot], means[slot], squares[slot]);
    }

    /** The totals of every vignette, in slot order, each read through one reused view. */
    Collection<ClusterTotals> all() {
        return new Totals(null, false);
    }

    /** Per group, the totals of its vignettes, in slot order: one pass over the vignettes. */
    Map<String, Collection<ClusterTotals>> byGroup() {
        Map<String, int[]> slots = new HashMap<>();
        Map<String, int[]> filled = new HashMap<>();
        for (int i = 0; i < size; i++) {
            filled.computeIfAbsent(groups[i], g -> new int[1])[0]++;
        }
        Map<String, Collection<ClusterTotals>> out = new HashMap<>();
        filled.forEach((g, n) -> {
            slots.put(g, new int[n[0]]);
            n[0] = 0;
        });
        for (int i = 0; i < size; i++) {
            slots.get(groups[i])[filled.get(groups[i])[0]++] = i;
        }
        slots.forEach((g, in) -> out.put(g, new Totals(in, false)));
        return out;
    }

    /** The totals without failed answers of the vignettes that have any such answer, in slot order. */
    Collection<ClusterTotals> withoutFailed() {
        int n = 0;
        int[] in = new int[size];
        for (int i = 0; i < size; i++) {
            if ((answered[i] == null ? counts[i] : answered[i].count()) > 0) {
                in[n++] = i;
            }
        }
        return new Totals(Arrays.copyOf(in, n), true);
    }

    /** A vignette's totals read from the arrays. */
    private final class Slot extends ClusterTotals {
        int at;

        @Override
        public int count() {
            return counts[at];
        }

        @Override
        public double sum() {
            return sums[at];
        }

        @Override
        public double mean() {
            return means[at];
        }

        @Override
        public double squares() {
            return squares[at];
        }
    }

    /**
     * The totals of some slots (all when {@code slots} is null), for
     * {@link dev.panoptes.control.stats.Accuracy#of}: an iterator whose elements are one view,
     * moved along (not to be kept), or a vignette's totals without failed answers.
     */
    private final class Totals extends AbstractCollection<ClusterTotals> {
        private final int[] slots;
        private final boolean withoutFailed;

        Totals(int[] slots, boolean withoutFailed) {
            this.slots = slots;
            this.withoutFailed = withoutFailed;
        }

        @Override
        public int size() {
            return slots == null ? VignetteTallies.this.size : slots.length;
        }

        @Override
        public Iterator<ClusterTotals> iterator() {
            Slot view = new Slot();
            int n = size();
            return new Iterator<>() {
                private int next;

                @Override
                public boolean hasNext() {
                    return next < n;
                }

                @Override
                public ClusterTotals next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    int at = slots == null ? next : slots[next];
                    next++;
                    if (withoutFailed && answered[at] != null) {
                        return answered[at];
                    }
                    view.at = at;
                    return view;
                }
            };
        }
    }
}
