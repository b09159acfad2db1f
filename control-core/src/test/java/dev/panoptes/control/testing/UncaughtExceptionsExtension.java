package dev.panoptes.control.testing;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Fails a test when a thread died of an uncaught exception while it ran: a background thread
 * that crashes (a selector loop, a session's reader) is a bug even when the assertions on the
 * test thread happen to pass. Registered for every test class of every module through
 * {@code META-INF/services} and JUnit's extension autodetection (switched on in the parent POM).
 */
public final class UncaughtExceptionsExtension implements BeforeEachCallback, AfterEachCallback {
    private static final List<String> UNCAUGHT = new CopyOnWriteArrayList<>();

    static {
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> {
            UNCAUGHT.add(thread.getName() + ": " + error);
            if (previous != null) {
                previous.uncaughtException(thread, error);
            } else {
                System.err.print("Exception in thread \"" + thread.getName() + "\" ");
                error.printStackTrace();
            }
        });
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        UNCAUGHT.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!UNCAUGHT.isEmpty()) {
            List<String> seen = List.copyOf(UNCAUGHT);
            UNCAUGHT.clear();
            throw new AssertionError("threads died of uncaught exceptions during this test: " + seen);
        }
    }
}
