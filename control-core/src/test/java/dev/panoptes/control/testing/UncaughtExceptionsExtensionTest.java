package dev.panoptes.control.testing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class UncaughtExceptionsExtensionTest {
    private final UncaughtExceptionsExtension extension = new UncaughtExceptionsExtension();

    @Test
    void aThreadThatDiesOfAnUncaughtExceptionFailsTheTest() throws InterruptedException {
        extension.beforeEach(null);
        Thread crashing = new Thread(() -> {
            throw new IllegalStateException("selector loop crashed");
        }, "crashing-thread");
        crashing.start();
        crashing.join();

        assertThatThrownBy(() -> extension.afterEach(null)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("crashing-thread: java.lang.IllegalStateException: selector loop crashed");
        assertThatCode(() -> extension.afterEach(null)).doesNotThrowAnyException();
    }
}
