package dev.panoptes.control;

/**
 * The identity of a job: 1 to 256 characters, unique within a run. Results are stored under
 * {@code (jobId, vignetteId)}, and answers on a connection are matched by it.
 *
 * @param value the id as it appears on the wire
 */
public record JobId(String value) implements Comparable<JobId> {
    /** The longest id PROTOCOL.md allows. */
    public static final int MAX_LENGTH = 256;

    /** @throws IllegalArgumentException when the id is empty or longer than 256 characters */
    public JobId {
        Checks.length(value, MAX_LENGTH, "job id");
    }

    /** Shorthand for {@code new JobId(value)}. */
    public static JobId of(String value) {
        return new JobId(value);
    }

    /**
     * Equal ids have equal values. Written out rather than left to the record: job ids are map
     * keys on every answer on both sides of the wire, and the generated equals goes through an
     * invokedynamic bootstrap that showed in profiles.
     */
    @Override
    public boolean equals(Object o) {
        return this == o || (o instanceof JobId other && value.equals(other.value));
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public int compareTo(JobId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
