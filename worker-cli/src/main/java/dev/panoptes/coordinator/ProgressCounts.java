package dev.panoptes.coordinator;

/**
 * What the run's console counts beside the scheduler's own events: answers served from the
 * response cache and money spent, for the parts of the coordinator that know them. The progress
 * bar shows a count only once something has fed it (a run without a cache or without prices shows
 * neither); the plain progress lines do not show them.
 *
 * <p>Any thread; each call is an increment (no lock, no I/O), so it may be called per answer on
 * a hot thread. The console thread reads the sums when it redraws.
 */
public interface ProgressCounts {

    /** {@code answers} more answers were served from the response cache instead of a model call. */
    void addCacheHits(int answers);

    /** {@code dollars} more were spent on model calls (from token counts and the given prices). */
    void addCost(double dollars);

    /** Counts nothing: for a run without a console. */
    ProgressCounts NONE = new ProgressCounts() {
        @Override
        public void addCacheHits(int answers) {
        }

        @Override
        public void addCost(double dollars) {
        }
    };
}
