package dev.panoptes.coordinator;

import dev.panoptes.console.Durations;
import dev.panoptes.control.Plural;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.cache.CachePlan;
import dev.panoptes.control.cache.CachePolicy;
import dev.panoptes.control.WorkerHandle;
import dev.panoptes.control.schedule.EndpointGovernor;
import dev.panoptes.control.schedule.RunReport;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.control.store.StoreException;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.Suite;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The words {@link CoordinatorRun} prints about its run, apart from the sequence that decides when:
 * what the run is, what the response cache served, how to start a worker for it, where its admin endpoint is, and
 * the summary's closing lines (the error rate over the limit, the rate governor's cuts, the grading that failed), why
 * a run whose lock was lost stopped. Stateless; any
 * thread.
 */
final class RunLines {
    private static final Logger log = LoggerFactory.getLogger(RunLines.class);

    private RunLines() {
    }

    /**
     * The command line that starts a worker for this run, as the operator would type it.
     *
     * @param tlsCa where the workers find the CA to trust, or null when the coordinator speaks plain TCP
     */
    static String workerHint(String workerCommand, InetSocketAddress address, CoordinatorSettings settings,
                             String tlsCa, boolean clientCertificates) {
        return "start workers with:\n  " + workerCommand + " --coordinator " + CoordinatorRun.hostPort(address)
                + " --model-api URL" + modelOptions(settings)
                + (settings.token() == null ? "" : " --token \"$PANOPTES_TOKEN\"")
                + (tlsCa == null ? "" : " --tls --tls-ca " + tlsCa)
                + (clientCertificates ? " --tls-cert WORKER.crt --tls-key WORKER.key" : "");
    }

    /** Where the run's answers come from and go when its worker runs in this process. */
    static String inProcess(WorkerHandle worker, DatabaseTarget target, CoordinatorSettings settings) {
        return "running in this process on worker " + worker.id() + " (" + Plural.of(worker.capacity(), "job")
                + " at once" + (worker.endpoint() == null ? "" : ", model API " + worker.endpoint())
                + "); results go to " + target + "; each attempt of a job may take "
                + Durations.format(settings.jobTimeout()) + " (--job-timeout)";
    }

    /** What the run is: the suite's size times the models and epochs, in how many jobs, and its scorer. */
    static String plan(CoordinatorSettings settings, Suite suite, JobPlan plan) {
        return String.format(Locale.ROOT, "suite %s: %s x %s x %s = %s in %s of up to %d (run %s); scorer %s",
                settings.suite(), Plural.of(suite.vignettes().size(), "vignette"),
                Plural.of(settings.models().size(), "model"), Plural.of(settings.epochs(), "epoch"),
                Plural.of(plan.vignetteCount(), "answer"), Plural.of(plan.jobs().size(), "job"),
                settings.jobSize(), plan.runId(), settings.scorer());
    }

    /** Where the admin endpoint listens and who may read it. */
    static String adminEndpoint(InetSocketAddress address, boolean hasToken) {
        return "admin endpoint on http://" + CoordinatorRun.hostPort(address) + "/: /metrics, /status"
                + (hasToken ? " (with the token)"
                : address.getAddress().isLoopbackAddress() ? " (no token: this machine only)"
                : " (no token: open to anyone who can reach it, --metrics-insecure)");
    }

    /** Why the exit code is {@code exitCode} although every job completed: the failed answers are too many. */
    static String errorRate(FailedAnswers failedAnswers, double maxErrorRate, int exitCode) {
        return String.format(Locale.ROOT, "  error rate:  %s of %s stored (%.1f %%) is more than --max-error-rate %s"
                + " allows: exit %d%n", Plural.of(failedAnswers.failed(), "failed answer"),
                Plural.of(failedAnswers.stored(), "answer"), 100.0 * failedAnswers.failed() / failedAnswers.stored(),
                BigDecimal.valueOf(maxErrorRate).stripTrailingZeros().toPlainString(), exitCode);
    }

    /** What the rate governor did, for the summary: one line per model API that answered 429; "" without one. */
    static String governor(EndpointGovernor governor) {
        if (governor == null) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        governor.state().forEach((endpoint, st) -> {
            if (st.throttled() > 0) {
                b.append(String.format(Locale.ROOT, "  rate:        %s answered 429 %s; the fleet's limit on it was"
                        + " cut %s and ended at %.1f jobs in flight%n", endpoint, Plural.of(st.throttled(), "time"),
                        Plural.of(st.cuts(), "time"), st.limit()));
            }
        });
        return b.toString();
    }

    /** The grading jobs that failed, whose answers stay unscored, and how to grade them. */
    static String ungraded(RunReport grading) {
        RunReport.FailedJob first = grading.failed().get(0);
        return String.format("  grading:     %s failed, their answers are unscored (first: %s after %s: %s); run the"
                + " same command again to grade them%n", Plural.of(grading.failed().size(), "grading job"),
                first.jobId(), Plural.of(first.attempts(), "attempt"), first.reason());
    }

    /** Answers the judge graded no verdict for, why (the first), and the exit code that follows. */
    static String notGraded(JudgePhase.Ungraded ungraded, int exit) {
        return String.format("  grading:     %s left ungraded by the judge%s; check that the judge model answers"
                + " with the rubric's JSON verdict: exit %d%n", Plural.of(ungraded.answers(), "answer"),
                ungraded.first() == null ? "" : " (first: " + ungraded.first() + ")", exit);
    }

    /**
     * What the response cache did for this run, or why it is off.
     *
     * @param loglikelihoodOnly true when every vignette is asked by log-likelihood (multiple choice)
     */
    static String cache(CachePolicy policy, SpecParams params, CachePlan plan, boolean loglikelihoodOnly) {
        String off = policy.whyOff(params, loglikelihoodOnly);
        return off != null ? "response cache: " + off : plan.describe();
    }

    /** "1 record is kept", "40 records are kept". */
    static String recordsKept(long n) {
        return Plural.of(n, "record") + (n == 1 ? " is kept" : " are kept");
    }

    /** "model 'a'", "models 'a', (any model)". */
    static String describe(Set<String> models) {
        List<String> named = new ArrayList<>();
        for (String m : models) {
            named.add(m == null ? "(any model)" : "'" + m + "'");
        }
        return (named.size() == 1 ? "model " : "models ") + String.join(", ", named);
    }

    /**
     * Why a run whose lock was lost stopped, and what it kept: how many of its jobs the store holds
     * complete, when the store still answers.
     */
    static String lockLost(StoreLock.LostException lost, JdbcResultStore store, JobPlan plan) {
        String kept;
        try {
            int complete = store.completedAmong(plan.jobs()).size();
            kept = complete + " of " + Plural.of(plan.jobs().size(), "job") + (complete == 1 ? " is" : " are")
                    + " complete and kept there";
        } catch (StoreException e) {
            // The database may be what went away; what it stored is still there.
            log.debug("cannot count the complete jobs after the lock was lost", e);
            kept = "what was stored is kept there";
        }
        return "the run stopped: " + lost.getMessage() + "; another coordinator may take the run now,"
                + " so this one stopped writing: " + kept + "; run the same command again to resume (it is refused,"
                + " naming the holder, while another coordinator has the run)";
    }

    /** " --model a --model b" for the hint that shows how to start a worker. */
    private static String modelOptions(CoordinatorSettings settings) {
        StringBuilder b = new StringBuilder();
        for (String m : settings.models()) {
            b.append(" --model ").append(m.matches("[A-Za-z0-9._:/@-]+") ? m : "'" + m.replace("'", "'\\''") + "'");
        }
        String judge = RunScoring.judgeModelOf(settings.scorer());
        if (judge != null && !settings.models().contains(judge)) {
            b.append("  (and, on workers that serve the judge: --model ").append(judge).append(')');
        }
        return b.toString();
    }
}
