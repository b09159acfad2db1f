package dev.panoptes.control;

/**
 * The unit of work the scheduler dispatches: one spec, under one id.
 *
 * <p>{@code runId} and {@code epoch} say where the job belongs in an eval run, for the result
 * store; they do not travel on the wire (the worker needs only the id and the spec).
 *
 * @param id    unique within a run
 * @param spec  what to evaluate
 * @param runId the run this job belongs to, or null
 * @param epoch which repetition of the suite it is, from 0
 */
public record Job(JobId id, EvalSpec spec, String runId, int epoch) {
    /**
     * @throws NullPointerException     when id or spec is missing
     * @throws IllegalArgumentException when epoch is negative
     */
    public Job {
        Checks.notNull(id, "job id");
        Checks.notNull(spec, "spec of job", id);
        Checks.notNegative(epoch, "epoch of job", id);
    }

    /** A job outside any run. */
    public Job(JobId id, EvalSpec spec) {
        this(id, spec, null, 0);
    }

    /** The number of vignettes, and so of records a complete outcome holds. */
    public int size() {
        return spec.vignettes().size();
    }

    /** The model the job asks for (its spec's), or null when any will do. */
    public String model() {
        return spec.params().model();
    }
}
