package dev.panoptes.coordinator;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A test model's gate for a run that must be interrupted before it completes: the first
 * {@code passing} jobs it is asked go through at once, and every later one waits in
 * {@link #pass()} until {@link #open()}, so that a run cannot store all its answers before the
 * interrupt a test sends on its first completions is seen (it would then exit 0, complete).
 * Thread-safe.
 */
final class AnswerGate {
    /** A gate that holds no job. */
    static final AnswerGate OPEN = new AnswerGate(Integer.MAX_VALUE);

    private final int passing;
    private final AtomicInteger asked = new AtomicInteger();
    private final CountDownLatch opened = new CountDownLatch(1);

    AnswerGate(int passing) {
        this.passing = passing;
    }

    /** Called by the model for each job it is asked: returns at once for the first ones, else once opened. */
    void pass() throws InterruptedException {
        if (asked.incrementAndGet() > passing) {
            // Below the tests' 60 s timeout, so that a gate never opened fails here and says so.
            assertThat(opened.await(30, TimeUnit.SECONDS)).as("the held jobs are let through").isTrue();
        }
    }

    /** Lets every held job and every later one through. */
    void open() {
        opened.countDown();
    }
}
