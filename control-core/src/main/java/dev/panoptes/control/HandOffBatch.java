package dev.panoptes.control;

import java.util.ArrayList;
import java.util.List;

/**
 * A burst of hand-offs from one thread to others, delivered together when the burst ends, so that
 * each receiving thread is woken once per burst rather than once per item. A selector thread that
 * reads a pass's answers completes their futures inside one batch, and the scheduler's thread
 * hears of all of them in one event; the scheduler dispatches a round of jobs inside one batch,
 * and each selector loop is woken once for the round.
 *
 * <p>Whoever hands off asks {@link #send} (an item for a {@link Receiver}) or {@link #deferWake}
 * (a wake-up of another thread). With no batch open on the calling thread both act at once, so
 * code that never opens a batch (an embedder's own threads) sees no difference. Inside a batch
 * the items wait, per receiver and in the order sent, and each distinct wake-up is run once, when
 * the outermost batch of the thread {@link #close closes}. Items always precede wake-ups.
 *
 * <p>A thread must not block waiting for another while it holds a wake-up back: one that is about
 * to wait for a receiver (a full queue, say) calls {@link #flush()} first.
 *
 * <p><b>Hosts.</b> A thread that opens its outermost batch with {@link #openHost()} offers its
 * time to the receivers: while that batch's items are delivered, {@link #deliveringOnHost()} is
 * true, and a receiver that can do the items' work on any thread under its own exclusion (the
 * scheduler's run, under its turn) may do it right there instead of waking its own thread. A
 * selector thread completing its pass's futures does so; the work then never crosses threads.
 * The host promises what a receiver's work needs: it may be called back, and dispatch to
 * workers, but holds no lock a receiver's work could want.
 *
 * <p>Threads: a batch belongs to the thread that opened it; every method acts on the calling
 * thread's batch. Not for use across threads.
 */
public final class HandOffBatch implements AutoCloseable {
    /**
     * Takes items handed off by another thread, many at once.
     *
     * @param <T> the items
     */
    public interface Receiver<T> {
        /**
         * Takes the items, in the order they were sent, on the sending thread; must not block.
         * Called with one item when no batch was open.
         */
        void receiveAll(List<T> items);
    }

    private static final ThreadLocal<HandOffBatch> CURRENT = ThreadLocal.withInitial(HandOffBatch::new);

    /** Levels of nesting a thread may open. */
    private static final int MAX_DEPTH = 63;

    // ---- the owning thread only (the batch is thread-local)
    private int depth;
    /** Bit i set: the level opened at depth i holds wake-ups back too ({@link #open()}). */
    private long holdsWakes;
    /** True while the outermost level open was opened by {@link #openHost()}. */
    private boolean hostOpen;
    /** True while items of a host's outermost batch are being delivered ({@link #deliveringOnHost()}). */
    private boolean hostDelivering;
    private final List<Receiver<Object>> receivers = new ArrayList<>(4);
    private final List<List<Object>> items = new ArrayList<>(4);
    private final List<Runnable> wakes = new ArrayList<>(4);

    private HandOffBatch() {
    }

    /**
     * Opens a batch on the calling thread (or nests in the one open); what is handed off until the
     * matching {@link #close()} is delivered then. Close it in a {@code finally}.
     */
    public static HandOffBatch open() {
        return open(true);
    }

    /**
     * Opens a batch that holds back items only: a {@link #deferWake} inside it (unless an outer
     * level holds wake-ups) wakes at once. For a thread whose callbacks may dispatch work to
     * another thread that should start on it while this one goes on (completion threads), yet
     * whose events for one receiver belong together.
     */
    public static HandOffBatch openForItems() {
        return open(false);
    }

    /**
     * Opens a batch as {@link #openForItems()} does, whose items, when it is the outermost level,
     * are delivered with {@link #deliveringOnHost()} true: the calling thread offers to do the
     * receivers' work itself (see the class comment). Nested in an open batch it is a plain
     * {@link #openForItems()}: the outermost level decides.
     */
    public static HandOffBatch openHost() {
        HandOffBatch batch = open(false);
        if (batch.depth == 1) {
            batch.hostOpen = true;
        }
        return batch;
    }

    /**
     * True on a thread delivering the items of a batch opened by {@link #openHost()}, for the
     * receivers to ask: the thread offers to do their work here. False on every other thread and
     * inside a batch a receiver opens of its own (whose delivery is not the host's).
     */
    public static boolean deliveringOnHost() {
        return CURRENT.get().hostDelivering;
    }

    private static HandOffBatch open(boolean wakes) {
        HandOffBatch batch = CURRENT.get();
        if (batch.depth == MAX_DEPTH) {
            throw new IllegalStateException("hand-off batches nested more than " + MAX_DEPTH + " deep");
        }
        if (wakes) {
            batch.holdsWakes |= 1L << batch.depth;
        }
        batch.depth++;
        return batch;
    }

    /**
     * Closes this level; the outermost close delivers everything held back, items first. An
     * exception thrown by a receiver or a wake-up propagates after the rest were delivered (the
     * first one, others suppressed).
     *
     * @throws IllegalStateException when called on another thread than the one that opened it, or
     *                               with no batch open
     */
    @Override
    public void close() {
        if (CURRENT.get() != this || depth == 0) {
            throw new IllegalStateException("a hand-off batch closed on a thread that has none open");
        }
        depth--;
        holdsWakes &= ~(1L << depth);
        if (depth == 0) {
            boolean host = hostOpen;
            hostOpen = false;
            deliverFor(host);
        }
    }

    /**
     * Hands {@code item} to {@code receiver}: now when no batch is open on this thread, else when
     * the batch closes, after the items sent before it to the same receiver.
     */
    @SuppressWarnings("unchecked")
    public static <T> void send(Receiver<T> receiver, T item) {
        HandOffBatch batch = CURRENT.get();
        if (batch.depth == 0) {
            receiver.receiveAll(List.of(item));
            return;
        }
        List<Receiver<Object>> rs = batch.receivers;
        for (int i = 0; i < rs.size(); i++) {
            if (rs.get(i) == receiver) {
                batch.items.get(i).add(item);
                return;
            }
        }
        rs.add((Receiver<Object>) receiver);
        List<Object> list = new ArrayList<>();
        list.add(item);
        batch.items.add(list);
    }

    /**
     * Holds {@code wake} back until the open batch closes, running it once however often it is
     * deferred (the same object).
     *
     * @return false when no batch that holds wake-ups is open on this thread: the caller wakes now
     */
    public static boolean deferWake(Runnable wake) {
        HandOffBatch batch = CURRENT.get();
        if (batch.holdsWakes == 0) {
            return false;
        }
        List<Runnable> ws = batch.wakes;
        for (int i = 0; i < ws.size(); i++) {
            if (ws.get(i) == wake) {
                return true;
            }
        }
        ws.add(wake);
        return true;
    }

    /** True while a batch is open on the calling thread. */
    public static boolean isOpen() {
        return CURRENT.get().depth > 0;
    }

    /**
     * Delivers what the calling thread's open batch holds now, leaving the batch open; does
     * nothing when none is open. For a thread about to wait on a receiver.
     */
    public static void flush() {
        HandOffBatch batch = CURRENT.get();
        if (batch.depth > 0) {
            batch.deliverFor(batch.hostOpen);
        }
    }

    /**
     * Delivers with {@link #deliveringOnHost()} saying {@code host}: straight through when it says
     * so already (every batch that is not a host's, the common path), else by {@link #deliverAs}.
     */
    private void deliverFor(boolean host) {
        if (host != hostDelivering) {
            deliverAs(host);
        } else {
            deliver();
        }
    }

    /**
     * {@link #deliver()} with {@link #deliveringOnHost()} saying {@code host}: a host's batch, or a
     * receiver's own batch inside a host's delivery. Apart from {@link #deliver()}, so that the
     * path every other batch takes stays as it was.
     */
    private void deliverAs(boolean host) {
        boolean outer = hostDelivering;
        hostDelivering = host;
        try {
            deliver();
        } finally {
            hostDelivering = outer;
        }
    }

    private void deliver() {
        RuntimeException first = null;
        // Delivering may hand off again (a receiver that sends on): loop until nothing is held.
        while (!receivers.isEmpty() || !wakes.isEmpty()) {
            while (!receivers.isEmpty()) {
                Receiver<Object> r = receivers.remove(0);
                List<Object> list = items.remove(0);
                try {
                    r.receiveAll(list);
                } catch (RuntimeException e) {
                    first = keep(first, e);
                }
            }
            while (!wakes.isEmpty()) {
                try {
                    wakes.remove(0).run();
                } catch (RuntimeException e) {
                    first = keep(first, e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static RuntimeException keep(RuntimeException first, RuntimeException e) {
        if (first == null) {
            return e;
        }
        first.addSuppressed(e);
        return first;
    }
}
