package dev.panoptes.control.suite;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.RandomAccess;

/**
 * A suite's line numbers, one per vignette ({@link Suite#lines()}), kept as {@code int}s: a
 * million vignettes' lines are one array of 4 MB rather than a million {@link Integer}s and two
 * arrays of references, which the collector copied while the suite was read. A reader appends to
 * one ({@link #add}); {@link Suite} keeps a copy that cannot change ({@link #frozen}).
 *
 * <p>Not thread-safe while it is appended to; a frozen one is immutable.
 */
public final class LineNumbers extends AbstractList<Integer> implements RandomAccess {
    private int[] lines;
    private int size;
    private final boolean frozen;

    /** An empty list to append to. */
    public LineNumbers() {
        this(new int[16], 0, false);
    }

    private LineNumbers(int[] lines, int size, boolean frozen) {
        this.lines = lines;
        this.size = size;
        this.frozen = frozen;
    }

    /**
     * Appends a line number.
     *
     * @throws UnsupportedOperationException on a frozen list
     * @throws NullPointerException          when {@code line} is null
     */
    @Override
    public boolean add(Integer line) {
        if (frozen) {
            throw new UnsupportedOperationException("a suite's line numbers do not change");
        }
        if (size == lines.length) {
            lines = Arrays.copyOf(lines, lines.length * 2);
        }
        lines[size++] = line;
        modCount++;
        return true;
    }

    @Override
    public Integer get(int index) {
        return getInt(index);
    }

    /** The line of vignette {@code index}, unboxed. */
    public int getInt(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("line " + index + " of " + size);
        }
        return lines[index];
    }

    @Override
    public int size() {
        return size;
    }

    /** This list as it is now, trimmed, unchangeable (itself when it already is). */
    public LineNumbers frozen() {
        return frozen ? this : new LineNumbers(Arrays.copyOf(lines, size), size, true);
    }
}
