package dev.panoptes.coordinator;

import dev.panoptes.control.Job;
import dev.panoptes.control.Plural;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.suite.JobPlan;
import dev.panoptes.control.suite.RunManifest;
import dev.panoptes.control.suite.SuiteFormatException;
import dev.panoptes.control.suite.SuiteSubset;
import dev.panoptes.eval.EvalJobRunner;
import dev.panoptes.eval.LoglikelihoodRequest;
import dev.panoptes.eval.http.ChatRequestBody;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A run's plan, printed instead of run ({@code --dry-run}): its id, the vignettes it asks, the models,
 * epochs and jobs, and the first few requests exactly as a worker would post them (the JSON body of
 * {@code /chat/completions}: system prompt, few-shot turns, the prompt, the model and the sampling
 * parameters), built by the worker's own code ({@link EvalJobRunner#request},
 * {@link ChatRequestBody}). It plans as a real run does ({@link PlannedRun}), so the id printed is
 * the id the same command would run under.
 *
 * <p>Calls no model, binds no port, opens no store: it reads the suite and few-shot files and
 * writes to the given writer. On the caller's thread.
 */
public final class DryRun {
    /** How many requests {@link #print} shows unless told otherwise. */
    public static final int DEFAULT_REQUESTS = 3;
    /** How many vignette ids the plan lists before "... and N more". */
    private static final int IDS_SHOWN = 20;

    private final CoordinatorSettings settings;
    private final SuiteSubset subset;

    /** @param subset the vignettes the run would ask, {@link SuiteSubset#ALL} for the whole suite */
    public DryRun(CoordinatorSettings settings, SuiteSubset subset) {
        this.settings = settings;
        this.subset = subset;
    }

    /**
     * Plans the run and prints it, with its first {@code requests} requests.
     *
     * @return the run's plan, as printed
     * @throws SuiteFormatException            when the suite or the few-shot file has problems
     * @throws SuiteSubset.UnknownIdsException when the subset names ids the suite lacks
     * @throws IOException                     when a file cannot be read
     */
    public JobPlan print(PrintWriter out, int requests) throws IOException, SuiteFormatException {
        PlannedRun planned = PlannedRun.of(settings, subset);
        RunManifest manifest = planned.manifest();
        JobPlan plan = planned.plan();
        out.println("Dry run: no model is called, no port is opened, nothing is stored.");
        out.println("run:       " + plan.runId());
        out.println("suite:     " + settings.suite() + ", " + Plural.of(manifest.vignettes(), "vignette") + " asked"
                + (manifest.subset() == null ? "" : " (subset: " + manifest.subset().describe() + ")"));
        out.println("vignettes: " + ids(planned));
        out.println("models:    " + String.join(", ", settings.models()));
        out.println("epochs:    " + settings.epochs());
        out.println(String.format(Locale.ROOT, "jobs:      %s of up to %d vignettes, %s in all",
                plan.jobs().size(), settings.jobSize(), Plural.of(plan.vignetteCount(), "answer")));
        out.println("scorer:    " + settings.scorer());
        printRequests(out, plan, requests);
        out.flush();
        return plan;
    }

    private static String ids(PlannedRun planned) {
        List<Vignette> all = planned.suite().vignettes();
        List<String> ids = new ArrayList<>(Math.min(IDS_SHOWN, all.size()));
        for (Vignette v : all.subList(0, Math.min(IDS_SHOWN, all.size()))) {
            ids.add(v.id());
        }
        String more = all.size() > IDS_SHOWN ? ", ... and " + (all.size() - IDS_SHOWN) + " more" : "";
        return String.join(", ", ids) + more;
    }

    private static void printRequests(PrintWriter out, JobPlan plan, int requests) {
        int shown = Math.min(requests, plan.vignetteCount());
        if (shown <= 0) {
            return;
        }
        out.println();
        out.println("The first " + Plural.of(shown, "request") + ", as a worker posts them to its --model-api"
                + "/chat/completions:");
        int printed = 0;
        for (Job job : plan.jobs()) {
            for (int i = 0; i < job.size() && printed < shown; i++, printed++) {
                out.println();
                out.println("job " + job.id() + ", vignette " + job.spec().vignettes().get(i).id() + ":");
                // Every job of a planned run names its model, so no worker's default is needed.
                Vignette v = job.spec().vignettes().get(i);
                if (v.isMultipleChoice() && v.choices().size() == 1) {
                    out.println("(one continuation, lm-eval's loglikelihood: to /completions, for its log-likelihood"
                            + " and whether it is the greedy one)");
                    out.println(ChatRequestBody.json(LoglikelihoodRequest.of(v, job.spec().params()), null));
                } else if (v.isMultipleChoice()) {
                    out.println("(multiple choice: to /completions, one prompt per choice, for their log-likelihoods)");
                    out.println(ChatRequestBody.json(LoglikelihoodRequest.of(v, job.spec().params()), null));
                } else {
                    out.println(ChatRequestBody.json(EvalJobRunner.request(job, i), null, true));
                }
            }
            if (printed == shown) {
                return;
            }
        }
    }
}
