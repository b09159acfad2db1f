package dev.panoptes.control;

/**
 * The unit of work the scheduler dispatches: one spec, under one id.
 *
 * @param id   unique within a run
 * @param spec what to evaluate
 */
public record Job(JobId id, EvalSpec spec) {
    /** @throws NullPointerException when either part is missing */
    public Job {
        Checks.notNull(id, "job id");
        Checks.notNull(spec, "spec of job " + id);
    }

    /** The number of vignettes, and so of records a complete outcome holds. */
    public int size() {
        return spec.vignettes().size();
    }
}
