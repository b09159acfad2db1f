package dev.panoptes.admin;

import java.util.List;

/**
 * What {@code GET /status} answers, as JSON (Jackson writes and reads these records; new fields
 * may appear, so readers ignore the ones they do not know). Times in seconds, instants in ISO-8601.
 *
 * @param run     the run as a whole
 * @param workers the workers connected now, draining ones included, in order of registration
 */
public record StatusView(Run run, List<Worker> workers) {
    public StatusView {
        workers = workers == null ? List.of() : List.copyOf(workers);
    }

    /**
     * @param id            the run's id
     * @param suite         the suite file
     * @param models        the models asked
     * @param scorer        the default scorer
     * @param epochs        how many times each vignette is asked
     * @param state         {@code running} or {@code finished}
     * @param phase         {@code answering}, or {@code grading} while a judge grades the answers
     * @param jobsTotal     jobs of the run's phases so far (those complete from an earlier run included)
     * @param jobsDone      jobs complete (stored earlier, or answered in this run)
     * @param jobsFailed    jobs that failed for good
     * @param jobsInFlight  jobs dispatched to a worker and not answered yet
     * @param answersStored records newly stored by this run
     * @param elapsedSeconds since the coordinator started the run
     * @param etaSeconds    how long until every job is done or failed, at the rate so far; null
     *                      before the first answer
     */
    public record Run(String id, String suite, List<String> models, String scorer, int epochs, String state,
                      String phase, long jobsTotal, long jobsDone, long jobsFailed, long jobsInFlight,
                      long answersStored, double elapsedSeconds, Double etaSeconds) {
        public Run {
            models = models == null ? List.of() : List.copyOf(models);
        }
    }

    /**
     * @param id                  the worker's id
     * @param address             its address as the coordinator sees it
     * @param capacity            jobs it runs at once
     * @param inFlight            jobs assigned to it and unanswered
     * @param queued              dispatches waiting for one of its slots
     * @param completed           jobs it answered in this run
     * @param failures            attempts that failed on it (any scope)
     * @param quarantine          {@code none}, {@code quarantined} or {@code probation}
     * @param quarantinedUntil    when a quarantine ends, or null
     * @param heartbeatAgeSeconds since it last sent anything; null when unknown
     * @param models              the models it serves; empty when it named none
     * @param draining            true once it announced it is shutting down
     * @param endpoint            the model API it calls, as {@code scheme://host:port/path} (never
     *                            user info, query or fragment, whatever it sent); null when it named none
     */
    public record Worker(String id, String address, int capacity, int inFlight, int queued, long completed,
                         long failures, String quarantine, String quarantinedUntil, Double heartbeatAgeSeconds,
                         List<String> models, boolean draining, String endpoint) {
        public Worker {
            models = models == null ? List.of() : List.copyOf(models);
        }
    }
}
