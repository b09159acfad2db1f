package dev.panoptes.bench.harness;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A thread's CPU in a window is read to better than the kernel's 10 ms tick: the fleet benchmark's
 * short windows (its own test's run is a fraction of a second) would otherwise give a busy thread 0
 * or 10 ms.
 */
class ThreadCpuTest {
    @Test
    void aThreadsFewMillisecondsOfCpuShowInItsGroupToBetterThanATick() throws Exception {
        long pid = ProcessHandle.current().pid();
        CountDownLatch sampled = new CountDownLatch(1);
        CountDownLatch spun = new CountDownLatch(1);
        CountDownLatch resampled = new CountDownLatch(1);
        AtomicReference<Long> spent = new AtomicReference<>();
        Thread busy = new Thread(() -> {
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            try {
                sampled.await();
                long from = mx.getCurrentThreadCpuTime();
                long x = 0;
                while (mx.getCurrentThreadCpuTime() - from < 3_000_000) {
                    x += Long.numberOfTrailingZeros(x + 1);
                }
                spent.set(mx.getCurrentThreadCpuTime() - from + (x == 42 ? 1 : 0));
                spun.countDown();
                resampled.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "result-store-test");
        busy.start();
        try {
            ThreadCpu.Sample a = ThreadCpu.sample(pid);
            sampled.countDown();
            spun.await();
            ThreadCpu.Sample b = ThreadCpu.sample(pid);
            resampled.countDown();
            long store = ThreadCpu.between(a, b).cpuByGroup().get("result-store");
            // At least the spin, and well under one 10 ms tick beyond it (ticks would say 0 or 10 ms).
            assertThat(store).isGreaterThanOrEqualTo(spent.get() - 500_000).isLessThan(spent.get() + 5_000_000);
        } finally {
            resampled.countDown();
            busy.join(10_000);
        }
    }

    /**
     * The store's thread ends once a run's last answers are written, often before the poll that
     * sees them: its CPU up to the last sample that saw it stays in its group, not in "other".
     */
    @Test
    void aThreadThatEndsInsideTheWindowCountsInItsGroupUpToItsLastSample() {
        long ms = 1_000_000;
        ThreadCpu.Sample a = new ThreadCpu.Sample(0, 100 * ms, Map.of(
                1L, new ThreadCpu.Task("main", 40 * ms, 40 * ms, 5, 0),
                2L, new ThreadCpu.Task("result-store", 60 * ms, 60 * ms, 10, 1)));
        ThreadCpu.Sample mid = new ThreadCpu.Sample(1, 190 * ms, Map.of(
                1L, new ThreadCpu.Task("main", 50 * ms, 50 * ms, 6, 0),
                2L, new ThreadCpu.Task("result-store", 140 * ms, 140 * ms, 30, 2)));
        // The store's thread is gone: the process's total still holds its CPU, and 5 ms more of it.
        ThreadCpu.Sample b = new ThreadCpu.Sample(2, 205 * ms, Map.of(
                1L, new ThreadCpu.Task("main", 60 * ms, 60 * ms, 7, 0)));

        ThreadCpu.Window window = ThreadCpu.between(List.of(a, mid, b));

        assertThat(window.cpuByGroup()).containsEntry("result-store", 80 * ms).containsEntry("main", 20 * ms)
                .containsEntry("other", 5 * ms);
        assertThat(window.processCpuNanos()).isEqualTo(105 * ms);
        assertThat(window.voluntary()).isEqualTo(22);
        // Two samples alone cannot see it: the store's 80 ms would be "other" (as before this counted).
        assertThat(ThreadCpu.between(a, b).cpuByGroup()).containsEntry("result-store", 0L)
                .containsEntry("other", 85 * ms);
    }
}
