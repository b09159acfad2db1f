package dev.panoptes.cli;

import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.stats.PairedDifference;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.DatabaseTarget;
import dev.panoptes.coordinator.ScorerMismatch;
import dev.panoptes.report.ComparisonJson;
import dev.panoptes.report.Figures;
import dev.panoptes.report.HtmlReport;
import dev.panoptes.report.MetricComparison;
import dev.panoptes.report.ModelComparison;
import dev.panoptes.report.RunData;
import dev.panoptes.report.RunDataLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code java -jar worker.jar compare --db A [--run X] [--db B] [--run Y] [--scoring N [--scoring M]]}:
 * the paired difference of models on the vignettes they share, with its 95 % interval, clustered
 * SE and p-value, and the vignettes whose score changed ({@link ModelComparison}). One run alone
 * pairs its models with each other; two runs (of one database or of two) pair each model of the
 * first with each model of the second. Each side shows one scoring: the latest, the one
 * {@code --scoring} names for every side, or with {@code --scoring} twice the first for the first
 * side and the second for the second. When the two sides' scorers differ it says so before the
 * figures, with the way out. Runs of multiple-choice tasks are also compared per metric
 * ({@link MetricComparison}: acc, acc_norm, acc_bytes), per task of a group file and over its
 * tasks. Console, {@code --json}, or an HTML report with a comparison section ({@code --out}).
 */
@Command(name = "compare",
        sortOptions = false,
        mixinStandardHelpOptions = true,
        description = {"Compares models on the vignettes they share: the paired difference (each vignette's mean"
                + " score over its epochs, compared minus baseline; a failed answer counts 0) with its 95%% interval,"
                + " standard error and two-sided p-value (paired t over vignettes), and the vignettes whose score"
                + " changed.",
            "One run: its models with each other. Two runs (--run twice, or --db and --run twice): each model of the"
                    + " first against each model of the second. A vignette is shared when both sides scored it with"
                    + " the same id, prompt and expected answer; the rest are counted as left out.",
            "Each side shows the latest scoring of its run unless --scoring says otherwise. When the two sides'"
                    + " scorers differ, a line before the figures says so (the difference then mixes models and"
                    + " scorers) and how to compare like with like.",
            "Runs of multiple-choice tasks are also compared per metric both sides have (acc, acc_norm,"
                    + " acc_bytes, recomputed from the answers' log-likelihoods): the same paired difference over"
                    + " every shared vignette, per task of a group file (or per value of --group-by), and the mean"
                    + " over the tasks, each counted once (lm-eval's group aggregate without weight_by_size; SE"
                    + " sqrt(sum SE^2)/k, Student's t with Welch-Satterthwaite degrees of freedom)."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:compared", "1:a database could not be read or the file not written",
            "2:invalid command line, or no such run", "3:nothing to compare: fewer than two models, or no"
                + " shared vignette"})
final class CompareCommand implements Callable<Integer> {
    /** Exit code when there is nothing to compare. */
    static final int NOTHING_TO_COMPARE = 3;

    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Option(names = "--db", order = 10, paramLabel = "FILE|URL", required = true,
            description = "A result database (a SQLite file, or postgresql://...); give it twice to compare runs"
                    + " of two databases.")
    private List<String> dbs;

    @Option(names = "--db-password-file", order = 11, paramLabel = "FILE",
            description = "A file whose first line is the PostgreSQL password (for every --db). Default: the "
                    + DatabaseTarget.PASSWORD_ENV + " or " + DatabaseTarget.PG_PASSWORD_ENV + " environment"
                    + " variable. Never printed.")
    private Path passwordFile;

    @Option(names = "--run", order = 15, paramLabel = "ID",
            description = "The run to compare (once per --db, or twice with one --db): its id or the id's first"
                    + " 8 or more characters. Default: the database's most recent run.")
    private List<String> runs;

    @Parameters(arity = "0..2", paramLabel = "RUN",
            description = "The same as --run, without the option: compare --db FILE RUN RUN.")
    private List<String> runArguments;

    @Option(names = "--scoring", order = 16, paramLabel = "N",
            description = "The scoring to show (1 is the first; rescore adds more; 0 is the latest). Once: for"
                    + " every run compared. Twice: the first for the first run, the second for the second, in the"
                    + " order of --run (or of --db). Default: the latest of each.")
    private List<Integer> scorings;

    @Option(names = "--show", order = 20, paramLabel = "N", defaultValue = "10",
            description = "Changed vignettes listed per model pair on the console (--json lists all). Default:"
                    + " ${DEFAULT-VALUE}.")
    private int show;

    @Option(names = "--group-by", order = 25, paramLabel = "KEY",
            description = "A metadata key to break each metric's difference down by, with the mean over its"
                    + " groups, each counted once. Default: the key the runs were made with (a group file's runs:"
                    + " task).")
    private String groupBy;

    @Option(names = "--json", order = 30, description = "Print JSON instead of text.")
    private boolean json;

    @Option(names = "--out", order = 40, paramLabel = "FILE",
            description = "Also write an HTML report of the compared runs with the comparison section first.")
    private Path out;

    private final Map<String, String> env;

    CompareCommand(Map<String, String> env) {
        this.env = env;
    }

    @Override
    public Integer call() throws IOException {
        verbose.apply();
        List<String> runIds = new ArrayList<>(runs == null ? List.of() : runs);
        if (runArguments != null) {
            runIds.addAll(runArguments);
        }
        if (dbs.size() > 2) {
            throw invalid("--db", "compare takes one or two databases, got " + dbs.size());
        }
        if (show < 0) {
            throw invalid("--show", "must be 0 or more, got " + show);
        }
        if (runIds.size() > 2 || dbs.size() == 2 && runIds.size() == 1) {
            throw invalid("--run", "give no --run, one per --db, or two with one --db; got " + runIds.size()
                    + " with " + dbs.size() + (dbs.size() == 1 ? " database" : " databases"));
        }
        int sides = Math.max(dbs.size(), runIds.size());
        List<Integer> scoringNumbers = scorings == null ? List.of() : scorings;
        if (scoringNumbers.size() > 1 && scoringNumbers.size() != sides) {
            throw invalid("--scoring", "give it once (for every run compared) or once per run, in the order of"
                    + " the runs; got " + scoringNumbers.size() + " for " + sides + (sides == 1 ? " run" : " runs")
                    + (sides == 1 ? " (to compare one run at two scorings, name it twice: --run ID --run ID)" : ""));
        }
        for (int n : scoringNumbers) {
            ScoringOption.check(spec, n);
        }
        List<RunData> data = new ArrayList<>();
        List<String> where = new ArrayList<>();
        for (int i = 0; i < sides; i++) {
            String db = dbs.get(Math.min(i, dbs.size() - 1));
            String runId = runIds.isEmpty() ? null : runIds.get(i);
            int scoring = scoringNumbers.isEmpty() ? 0 : scoringNumbers.get(Math.min(i, scoringNumbers.size() - 1));
            data.add(load(db, runId, scoring));
            where.add(db);
        }
        List<ModelComparison.Result> comparisons = ModelComparison.compareAll(data.get(0),
                data.size() == 1 ? null : data.get(1), groupBy);
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        if (comparisons.isEmpty()) {
            stderr.println("compare: run " + data.get(0).info().runId() + " of " + where.get(0) + " has "
                    + data.get(0).info().models().size() + (data.get(0).info().models().size() == 1 ? " model"
                    : " models") + ": nothing to compare it with; name a second run with --run (or --db and --run)");
            stderr.flush();
            return NOTHING_TO_COMPARE;
        }
        if (comparisons.stream().allMatch(c -> c.shared() == 0)) {
            stderr.print(noneShared(comparisons));
            stderr.flush();
            return NOTHING_TO_COMPARE;
        }
        String scorers = data.size() == 2 ? ScorerMismatch.line(data.get(0), where.get(0), data.get(1),
                where.get(1)) : null;
        if (json) {
            stdout.print(ComparisonJson.of(data, where, comparisons));
            if (scorers != null) {
                stderr.println(scorers);
            }
        } else {
            stdout.print(heading(data, where));
            if (scorers != null) {
                stdout.println(scorers);
            }
            stdout.print(render(comparisons, show));
        }
        if (out != null) {
            Path parent = out.toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                throw invalid("--out", "the folder " + parent + " does not exist");
            }
            HtmlReport.write(data, comparisons, out, null);
            (json ? stderr : stdout).printf("wrote %s; open it in a browser: %s%n", out, out.toAbsolutePath().toUri());
        }
        stdout.flush();
        stderr.flush();
        return 0;
    }

    private RunData load(String db, String runId, int scoring) {
        DatabaseTarget target = CoordinatorCommand.database(spec, db, passwordFile, env);
        if (target.missing()) {
            throw invalid("--db", "no such file: " + db + " (a coordinator creates it; see 'coordinator --help')");
        }
        try (JdbcResultStore store = target.open()) {
            List<String> ids = RunDataLoader.runIds(store);
            if (ids.isEmpty()) {
                throw invalid("--db", db + " holds no run");
            }
            String id = runId == null ? ids.get(0) : RunSelector.resolve(spec, ids, runId, db);
            return ScoringOption.load(spec, store, id, scoring, "");
        }
    }

    /**
     * The first console line: which runs are compared, at which scorings, by which method.
     *
     * @param data  one run, or the two sides in order
     * @param where the database of each, as the user named it
     */
    static String heading(List<RunData> data, List<String> where) {
        String first = side(data.get(0), where.get(0));
        String what = data.size() == 1 ? "Comparing the models of " + first
                : "Comparing " + first + " with " + side(data.get(1), where.get(1));
        return what + "; " + PairedDifference.METHOD + ", 95% CI from Student's t:\n";
    }

    /** "run X of DB (scoring 2, exact)": which run, where, and which scores. */
    private static String side(RunData run, String db) {
        return "run " + run.info().runId() + " of " + db + " (" + (run.scoring() == null ? "never scored"
                : "scoring " + run.scoring().number() + ", " + run.info().scorer()) + ")";
    }

    /**
     * The comparisons as console lines: per pair the difference line, the vignettes shared and
     * left out, and the first {@code show} vignettes whose score changed.
     */
    static String render(List<ModelComparison.Result> comparisons, int show) {
        StringBuilder sb = new StringBuilder();
        for (ModelComparison.Result c : comparisons) {
            sb.append("  ").append(c.name()).append(" - ").append(c.baselineName()).append(": ")
                    .append(c.difference().format()).append('\n');
            sb.append("    shared: ").append(plural(c.shared(), "vignette")).append("; left out: ").append(c.leftOut());
            if (c.leftOut() > 0) {
                sb.append(" (").append(c.onlyBaseline()).append(" only in ").append(c.baselineName()).append(", ")
                        .append(c.onlyOther()).append(" only in ").append(c.name()).append(", ").append(c.differing())
                        .append(" asked with another prompt or expected answer)");
            }
            sb.append('\n');
            List<ModelComparison.Changed> changed = c.changed();
            sb.append("    changed: ").append(plural(changed.size(), "vignette"));
            int listed = Math.min(show, changed.size());
            sb.append(listed == 0 ? "\n" : listed < changed.size() ? "; the first " + listed + ":\n" : ":\n");
            for (ModelComparison.Changed v : changed.subList(0, listed)) {
                sb.append("      ").append(v.vignetteId()).append(": ").append(Figures.ratio(v.baseline()))
                        .append(" -> ").append(Figures.ratio(v.other())).append(" (")
                        .append(Figures.difference(v.difference())).append(")\n");
            }
            renderMetrics(sb, c.metrics());
        }
        return sb.toString();
    }

    /**
     * Per metric the two sides share, its paired difference over every shared vignette, then per
     * group (a group file's task) and, with two groups or more, the mean of the groups, each
     * counted once (lm-eval's group aggregate without weight_by_size).
     */
    private static void renderMetrics(StringBuilder sb, List<MetricComparison> metrics) {
        if (metrics.isEmpty()) {
            return;
        }
        MetricComparison first = metrics.get(0);
        sb.append("    per metric (").append(Scorers.isLoglikelihood(first.metric())
                ? "multiple choice, recomputed from the answers' log-likelihoods" : "the runs' scores");
        if (metrics.stream().anyMatch(m -> m.groupMean() != null)) {
            sb.append("; the mean of the ").append(first.groupBy()).append(" groups: ")
                    .append(PairedDifference.MEAN_METHOD);
        }
        sb.append("):\n");
        for (MetricComparison m : metrics) {
            sb.append("      ").append(m.metric()).append(": ").append(m.difference().format()).append('\n');
            for (MetricComparison.Group g : m.groups()) {
                sb.append("        ").append(m.groupBy()).append('=').append(g.group()).append(": ")
                        .append(g.difference().format()).append('\n');
            }
            if (m.groupMean() != null) {
                sb.append("        mean of the ").append(m.groups().size()).append(' ').append(m.groupBy())
                        .append(" groups, each counted once: ").append(m.groupMean().format()).append('\n');
            }
        }
    }

    private static String noneShared(List<ModelComparison.Result> comparisons) {
        StringBuilder sb = new StringBuilder("compare: no vignette is shared, so there is nothing to pair:\n");
        for (ModelComparison.Result c : comparisons) {
            sb.append("  ").append(c.name()).append(" and ").append(c.baselineName()).append(": ")
                    .append(c.baselineVignettes()).append(" and ").append(c.vignettes())
                    .append(" scored vignettes, ").append(c.differing())
                    .append(" with the same id but another prompt or expected answer\n");
        }
        sb.append("A vignette is shared when both sides scored it with the same id, prompt and expected answer;"
                + " compare runs of the same suite.\n");
        return sb.toString();
    }

    private static String plural(int count, String noun) {
        return count + " " + noun + (count == 1 ? "" : "s");
    }

    private ParameterException invalid(String option, String message) {
        return CliErrors.invalid(spec, option, message);
    }
}
