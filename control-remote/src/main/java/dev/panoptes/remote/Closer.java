package dev.panoptes.remote;

/**
 * Closes many things in one go: every one is tried, the first failure is kept and the later
 * ones are added to it as suppressed, so that nothing is left open because something before
 * it failed to close.
 *
 * <p>Stateless; any thread.
 */
final class Closer {
    private Closer() {
    }

    /**
     * Closes each non-null resource in order after {@code failure} has happened, adding any
     * failure to close as suppressed to it.
     *
     * @return {@code failure}, to be rethrown by the caller
     */
    static <T extends Throwable> T closeAfter(T failure, AutoCloseable... resources) {
        Exception problems = closeAll(resources);
        if (problems != null) {
            failure.addSuppressed(problems);
        }
        return failure;
    }

    /**
     * Closes each non-null resource in order, going on past failures.
     *
     * @return null when all closed, otherwise the first failure with the rest suppressed in it
     */
    static Exception closeAll(AutoCloseable... resources) {
        Exception first = null;
        for (AutoCloseable resource : resources) {
            if (resource == null) {
                continue;
            }
            try {
                resource.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }
}
