package dev.panoptes.coordinator;

import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerSet;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/** The progress printer on a live terminal: the bar's redraws, its counts, and when there is no terminal. */
class LiveProgressTest {
    private static final String CLEAR = "\u001b[K";
    private static final Job TWO_ANSWERS = new Job(JobId.of("run-e0-0001"),
            new EvalSpec("s", List.of(new Vignette("a", "p"), new Vignette("b", "p"))));

    private final AtomicBoolean closed = new AtomicBoolean();
    private final LiveTerminal terminal = new LiveTerminal(() -> 100, "\r", CLEAR, () -> closed.set(true));

    @Test
    void theBarIsRedrawnAFewTimesASecondHoweverFastAnswersCome() throws Exception {
        StringWriter text = new StringWriter();
        long start = System.nanoTime();
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(text, true), () -> terminal, new WorkerSet());
        printer.expectAnswers(Long.MAX_VALUE / 4, 0);
        long until = start + TimeUnit.MILLISECONDS.toNanos(1_200);
        LongAdder calls = new LongAdder();
        List<Thread> hot = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                while (System.nanoTime() < until) {
                    printer.onCompleted(TWO_ANSWERS, null, null, null);
                    calls.increment();
                }
            });
            t.start();
            hot.add(t);
        }
        for (Thread t : hot) {
            t.join();
        }
        assertThat(printer.snapshot().done()).as("every answer counted").isEqualTo(2 * calls.sum());
        printer.finish();
        double seconds = (System.nanoTime() - start) / 1e9;

        int redraws = text.toString().split("\r\\[", -1).length - 1;
        assertThat(calls.sum()).as("answers far outnumber redraws").isGreaterThan(1_000);
        assertThat(redraws).isBetween(1, (int) Math.ceil(seconds * ProgressPrinter.REDRAW_PER_SECOND) + 1);
        assertThat(closed).as("the terminal is let go once the run's console ends").isTrue();
    }

    @Test
    void aMessageClearsTheBarAndTheRunEndsOnThePlainFinalLine() {
        StringWriter text = new StringWriter();
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(text, true), () -> terminal, new WorkerSet());
        printer.onStart(3, 0);
        printer.onCompleted(TWO_ANSWERS, null, null, null);
        printer.message("worker w1 registered");
        printer.finish();

        String out = text.toString();
        assertThat(out).contains("worker w1 registered" + System.lineSeparator());
        assertThat(out.lines().reduce((a, b) -> b).orElseThrow()).as("the final line, as the plain lines end")
                .matches("progress: 1/3 jobs \\(33%\\), 0 failed, 0 workers, 0 redelivered, [0-9.]+ jobs/s, ETA .+");
    }

    @Test
    void cacheHitsAndCostShowOnceSomethingFeedsThem() {
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(new StringWriter(), true), () -> terminal,
                new WorkerSet());
        assertThat(printer.snapshot().cacheHits()).isNegative();
        assertThat(printer.snapshot().cost()).isNaN();

        ProgressCounts counts = printer;
        counts.addCacheHits(3);
        counts.addCost(0.25);
        counts.addCost(0.25);
        printer.finish();

        assertThat(printer.snapshot().cacheHits()).isEqualTo(3);
        assertThat(printer.snapshot().cost()).isEqualTo(0.5);
        assertThat(ProgressBar.render(printer.snapshot(), 200)).contains("3 cached", "$0.50");
        assertThat(printer.line()).as("the plain line stays as it was").doesNotContain("cached", "$");
    }

    @Test
    void theAnswersOfAnEarlierRunCountAsDoneAndFailuresInAnswers() {
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(new StringWriter(), true), () -> terminal,
                new WorkerSet());
        printer.expectAnswers(10, 4);
        printer.onCompleted(TWO_ANSWERS, null, null, null);
        printer.onFailed(TWO_ANSWERS, "refused", 3);
        printer.close();

        ProgressBar.Snapshot s = printer.snapshot();
        assertThat(s.done()).isEqualTo(8);
        assertThat(s.failed()).isEqualTo(2);
        assertThat(s.unit()).isEqualTo("answer");
    }

    @Test
    void noLiveTerminalWhereStandardErrorIsNotOneOrTermIsDumb() {
        // Under the test runner standard error is a pipe, and no terminal is the truthful answer.
        assertThat(LiveTerminal.openStandardError(System.getenv())).isNull();
        assertThat(LiveTerminal.openStandardError(Map.of("TERM", "dumb"))).isNull();
    }
}
