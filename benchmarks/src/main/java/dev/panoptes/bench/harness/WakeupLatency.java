package dev.panoptes.bench.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Selector;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * How long this machine takes to wake a thread asleep in {@code Selector.select()}: from
 * {@link Selector#wakeup()} on one thread to {@code select} returning on the other. Each hand-off
 * between threads that sleep when idle pays this once (a worker's runner thread to its I/O thread,
 * a socket's bytes to the selector that waits for them), so a benchmark of a round trip of such
 * hand-offs states it beside its result, as it states a timer's lateness.
 *
 * <p>The waker sleeps a millisecond before each wake-up so that the selecting thread is asleep
 * when it comes, as it is between a worker's jobs; the first tenth of the samples warm up and are
 * dropped.
 */
public final class WakeupLatency {
    /** The median and the 90th percentile of the wake-ups measured, in microseconds. */
    public record Micros(double p50, double p90) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "p50 %.0f us, p90 %.0f us", p50, p90);
        }
    }

    private WakeupLatency() {
    }

    /**
     * Measures {@code samples} wake-ups.
     *
     * @throws IllegalArgumentException when {@code samples} is below 10
     * @throws InterruptedException     when the calling thread is interrupted
     * @throws IllegalStateException    when the selecting thread does not wake within a second
     */
    public static Micros measure(int samples) throws InterruptedException {
        if (samples < 10) {
            throw new IllegalArgumentException("samples must be at least 10, not " + samples);
        }
        long[] nanos = new long[samples];
        AtomicLong sentAt = new AtomicLong();
        Semaphore woken = new Semaphore(0);
        try (Selector selector = Selector.open()) {
            Thread sleeper = new Thread(() -> {
                try {
                    for (int i = 0; i < samples; i++) {
                        selector.select();
                        nanos[i] = System.nanoTime() - sentAt.get();
                        woken.release();
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, "wakeup-latency");
            sleeper.setDaemon(true);
            sleeper.start();
            try {
                for (int i = 0; i < samples; i++) {
                    // A millisecond for the sleeper to be back in select, and asleep there.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                    sentAt.set(System.nanoTime());
                    selector.wakeup();
                    if (!woken.tryAcquire(1, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("a thread in select did not wake within a second of"
                                + " wakeup()");
                    }
                }
            } finally {
                sleeper.interrupt();
                sleeper.join(TimeUnit.SECONDS.toMillis(1));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long[] kept = Arrays.copyOfRange(nanos, samples / 10, samples);
        Arrays.sort(kept);
        return new Micros(kept[kept.length / 2] / 1e3, kept[kept.length * 9 / 10] / 1e3);
    }
}
