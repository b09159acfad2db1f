package dev.panoptes.control;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The answer to one job: one record per vignette of its spec.
 *
 * @param jobId   the job answered
 * @param records unmodifiable; see {@link #requireAnswers(Job)} for the completeness check
 */
public record JobOutcome(JobId jobId, List<ResponseRecord> records) {
    /** @throws NullPointerException when a part is missing */
    public JobOutcome {
        Checks.notNull(jobId, "jobId of an outcome");
        records = List.copyOf(Checks.notNull(records, "records of outcome", jobId));
    }

    /**
     * What the model calls behind its records reported, all records together; a record without
     * usage counts as zero. Paid for whether or not the outcome is stored.
     */
    public Usage spent() {
        Usage all = Usage.ZERO;
        for (ResponseRecord r : records) {
            if (r.usage() != null) {
                all = all.plus(r.usage());
            }
        }
        return all;
    }

    /**
     * Checks that this outcome answers {@code job} exactly: same id, and exactly one record per
     * vignette of its spec.
     *
     * @return this outcome
     * @throws IllegalArgumentException naming the job and what was missing or extra
     */
    public JobOutcome requireAnswers(Job job) {
        if (!jobId.equals(job.id())) {
            throw new IllegalArgumentException("outcome for job " + jobId + " does not answer job " + job.id());
        }
        if (inVignetteOrder(job)) {
            // The usual case, checked without allocating: a spec's vignette ids are unique, so one
            // record per vignette in the spec's order is exactly one record per vignette.
            return this;
        }
        Set<String> expected = new HashSet<>();
        job.spec().vignettes().forEach(v -> expected.add(v.id()));
        Set<String> seen = new HashSet<>();
        for (ResponseRecord r : records) {
            if (!expected.contains(r.vignetteId())) {
                throw new IllegalArgumentException(
                        "outcome for job " + jobId + " has a record for unknown vignette '" + r.vignetteId() + "'");
            }
            if (!seen.add(r.vignetteId())) {
                throw new IllegalArgumentException(
                        "outcome for job " + jobId + " has vignette '" + r.vignetteId() + "' more than once");
            }
        }
        if (seen.size() != expected.size()) {
            expected.removeAll(seen);
            throw new IllegalArgumentException("outcome for job " + jobId + " has " + seen.size() + " of "
                    + Plural.of(job.size(), "record") + "; missing vignettes " + expected);
        }
        return this;
    }

    private boolean inVignetteOrder(Job job) {
        List<Vignette> vignettes = job.spec().vignettes();
        if (vignettes.size() != records.size()) {
            return false;
        }
        for (int i = 0; i < records.size(); i++) {
            if (!vignettes.get(i).id().equals(records.get(i).vignetteId())) {
                return false;
            }
        }
        return true;
    }
}
