package dev.panoptes.control;

import java.util.Objects;

/**
 * A set of ids that only answers whether an id was seen before ({@link #add}): a suite's vignette
 * ids as it is read, a run's job ids before it is scheduled. Open addressing over two arrays (the
 * ids and their hashes), with no object per id: a {@code HashSet} of a million ids made a million
 * nodes that the collector copied while the suite was read and planned, and garbage at each
 * doubling of its table.
 *
 * <p>Not thread-safe: one thread adds.
 */
public final class DistinctIds {
    private String[] ids;
    private int[] hashes;
    private int size;

    /** @param expected how many ids to make room for now (more are made room for as they come) */
    public DistinctIds(int expected) {
        int capacity = Integer.highestOneBit(Math.max(8, Math.min(1 << 29, expected)) * 2 - 1) << 1;
        ids = new String[capacity];
        hashes = new int[capacity];
    }

    /**
     * Adds {@code id}.
     *
     * @return true when it was not there yet, false when it was
     * @throws NullPointerException when {@code id} is null
     */
    public boolean add(String id) {
        Objects.requireNonNull(id, "id");
        int hash = spread(id.hashCode());
        int mask = ids.length - 1;
        for (int at = hash & mask; ; at = (at + 1) & mask) {
            String there = ids[at];
            if (there == null) {
                ids[at] = id;
                hashes[at] = hash;
                if (++size * 2 > ids.length) {
                    grow();
                }
                return true;
            }
            if (hashes[at] == hash && there.equals(id)) {
                return false;
            }
        }
    }

    /** The number of distinct ids added. */
    public int size() {
        return size;
    }

    private void grow() {
        String[] oldIds = ids;
        int[] oldHashes = hashes;
        ids = new String[oldIds.length * 2];
        hashes = new int[ids.length];
        int mask = ids.length - 1;
        for (int i = 0; i < oldIds.length; i++) {
            if (oldIds[i] != null) {
                int at = oldHashes[i] & mask;
                while (ids[at] != null) {
                    at = (at + 1) & mask;
                }
                ids[at] = oldIds[i];
                hashes[at] = oldHashes[i];
            }
        }
    }

    /**
     * Fibonacci hashing, its high bits folded into the low ones that pick the slot: a generated
     * suite's ids ("q1", "q2", ...) have neighbouring hashes, which linear probing alone would
     * pile up into long runs.
     */
    private static int spread(int h) {
        int x = h * 0x9E3779B9;
        return x ^ (x >>> 16);
    }
}
