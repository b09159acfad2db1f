package dev.panoptes.bench.harness;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
}
