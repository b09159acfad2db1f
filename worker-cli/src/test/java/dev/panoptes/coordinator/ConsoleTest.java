package dev.panoptes.coordinator;

import dev.panoptes.control.WorkerSet;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The coordinator's console: the progress printer and the fleet reporter. */
class ConsoleTest {

    @Test
    void messagesComeOutInOrderEachOnItsOwnLine() {
        StringWriter text = new StringWriter();
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(text, true), false, new WorkerSet());
        printer.message("one");
        printer.message("two");
        printer.finish();
        assertThat(text.toString().lines()).startsWith("one", "two").last().asString().startsWith("progress: ");
    }

    @Test
    void aConsoleThatTakesNoOutputNeverBlocksTheCallersAndKeepsTheNewestLinesAndTheFinalOne() throws Exception {
        CountDownLatch unblock = new CountDownLatch(1);
        StringBuilder printed = new StringBuilder();
        PrintWriter stalled = new PrintWriter(new OutputStream() {
            @Override
            public void write(int b) {
                try {
                    unblock.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                synchronized (printed) {
                    printed.append((char) b);
                }
            }
        }, true);
        ProgressPrinter printer = new ProgressPrinter(stalled, false, new WorkerSet());

        long start = System.nanoTime();
        int lines = ProgressPrinter.MAX_QUEUED_LINES + 500;
        for (int i = 0; i < lines; i++) {
            printer.message("line " + i);
        }
        printer.message("interrupted: 12 records are kept in math.db; run the same command again to resume");
        printer.finish();
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        // finish() gives up on a stalled console after about two seconds instead of hanging.
        assertThat(elapsedMs).isLessThan(10_000);
        unblock.countDown();
        await(() -> {
            synchronized (printed) {
                return printed.toString().contains("progress: ");
            }
        });
        List<String> out;
        synchronized (printed) {
            out = printed.toString().lines().toList();
        }
        assertThat(out).as("the newest lines, the run's last words and the final progress line, in order")
                .containsSubsequence("line " + (lines - 1), "interrupted: 12 records are kept in math.db; run the"
                        + " same command again to resume");
        assertThat(out.get(out.size() - 1)).startsWith("progress: ");
        assertThat(out).anySatisfy(l -> assertThat(l).matches("\\(\\d+ earlier console lines dropped while the"
                + " console was not taking output\\)"));
        assertThat(out).as("at most the limit waited, plus the line being written when it stalled")
                .filteredOn(l -> l.startsWith("line ")).hasSizeLessThanOrEqualTo(ProgressPrinter.MAX_QUEUED_LINES + 1);
    }

    @Test
    void aRejectionRepeatedFromOneHostIsPrintedOnceAMinuteButAlwaysCounted() {
        StringWriter text = new StringWriter();
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(text, true), false, new WorkerSet());
        AtomicLong now = new AtomicLong();
        FleetReporter fleet = new FleetReporter(printer, now::get);
        InetSocketAddress host = new InetSocketAddress("10.0.0.7", 40001);

        assertThat(fleet.rejectionsNote()).isEmpty();
        for (int i = 0; i < 5; i++) {
            fleet.onRejected(new InetSocketAddress("10.0.0.7", 40001 + i), "wrong token; check --token");
        }
        now.addAndGet(TimeUnit.SECONDS.toNanos(61));
        fleet.onRejected(host, "wrong token; check --token");
        printer.finish();

        assertThat(text.toString().lines().filter(l -> l.startsWith("worker rejected from"))).hasSize(2);
        assertThat(fleet.rejectionsNote()).isEqualTo(" 6 connections were refused so far (last from 10.0.0.7:"
                + " wrong token; check --token)");
    }

    private static void await(java.util.concurrent.Callable<Boolean> condition) {
        org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).until(condition);
    }
}
