package dev.panoptes.control.task;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * CPython's {@code random.Random(seed)} for a non-negative integer seed, as far as
 * {@code sample} needs it: the Mersenne Twister (MT19937) seeded by {@code init_by_array} with the
 * seed's 32-bit words, {@code getrandbits}, {@code _randbelow} by rejection and
 * {@code sample(population, k)} with both of its strategies (a pool for small populations, a set
 * of picked indices for large ones). lm-eval draws few-shot examples with
 * {@code Random(1234).sample(docs, n)}; this draws the same documents in the same order, so that a
 * task's prompts are the ones lm-eval builds.
 *
 * <p>Not thread-safe: one instance per sequence of draws.
 */
final class PythonRandom {
    private static final int N = 624;
    private static final int M = 397;
    private final int[] mt = new int[N];
    private int index = N + 1;

    /** {@code random.Random(seed)}. @throws IllegalArgumentException for a negative seed */
    PythonRandom(long seed) {
        if (seed < 0) {
            // CPython seeds with abs(seed); say so rather than silently differ from it.
            throw new IllegalArgumentException("seed must be at least 0, got " + seed);
        }
        int[] key = seed >>> 32 == 0 ? new int[] {(int) seed} : new int[] {(int) seed, (int) (seed >>> 32)};
        initByArray(key);
    }

    private void initGenrand(int s) {
        mt[0] = s;
        for (int i = 1; i < N; i++) {
            mt[i] = 1812433253 * (mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
        }
        index = N;
    }

    private void initByArray(int[] key) {
        initGenrand(19650218);
        int i = 1;
        int j = 0;
        for (int k = Math.max(N, key.length); k > 0; k--) {
            mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >>> 30)) * 1664525)) + key[j] + j;
            i++;
            j++;
            if (i >= N) {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if (j >= key.length) {
                j = 0;
            }
        }
        for (int k = N - 1; k > 0; k--) {
            mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >>> 30)) * 1566083941)) - i;
            i++;
            if (i >= N) {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x80000000;
    }

    /** The next 32 random bits, as an unsigned value. */
    long nextUint32() {
        if (index >= N) {
            for (int k = 0; k < N; k++) {
                int y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
                mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ ((y & 1) != 0 ? 0x9908b0df : 0);
            }
            index = 0;
        }
        int y = mt[index++];
        y ^= y >>> 11;
        y ^= (y << 7) & 0x9d2c5680;
        y ^= (y << 15) & 0xefc60000;
        y ^= y >>> 18;
        return y & 0xffffffffL;
    }

    /** {@code getrandbits(k)} for 1 to 32 bits. */
    private long getrandbits(int k) {
        return nextUint32() >>> (32 - k);
    }

    /** {@code _randbelow(n)}: uniform in [0, n), by rejection on n's bit length. */
    int randbelow(int n) {
        int k = 32 - Integer.numberOfLeadingZeros(n);
        long r = getrandbits(k);
        while (r >= n) {
            r = getrandbits(k);
        }
        return (int) r;
    }

    /**
     * {@code sample(population, k)}: k distinct elements in the order drawn.
     *
     * @throws IllegalArgumentException when k is negative or larger than the population
     */
    <T> List<T> sample(List<T> population, int k) {
        int n = population.size();
        if (k < 0 || k > n) {
            throw new IllegalArgumentException("Sample larger than population or is negative");
        }
        List<T> result = new ArrayList<>(k);
        int setsize = 21;
        if (k > 5) {
            setsize += (int) Math.pow(4, Math.ceil(Math.log(k * 3.0) / Math.log(4)));
        }
        if (n <= setsize) {
            List<T> pool = new ArrayList<>(population);
            for (int i = 0; i < k; i++) {
                int j = randbelow(n - i);
                result.add(pool.get(j));
                pool.set(j, pool.get(n - i - 1));
            }
        } else {
            Set<Integer> selected = new HashSet<>();
            for (int i = 0; i < k; i++) {
                int j = randbelow(n);
                while (selected.contains(j)) {
                    j = randbelow(n);
                }
                selected.add(j);
                result.add(population.get(j));
            }
        }
        return result;
    }
}
