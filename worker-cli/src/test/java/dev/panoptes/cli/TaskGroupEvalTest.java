package dev.panoptes.cli;

import dev.panoptes.report.StreamedFigures;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code eval --task GROUP.yaml}: an lm-eval group file runs its tasks as one run against the
 * stub model, with each task's figures (the same as the task run alone) and the group's
 * aggregates; a group file using what Panoptes does not read is refused before any model call,
 * naming the file, the line and what to do.
 */
class TaskGroupEvalTest {
    private static final Path EVALS = Path.of("..", "evals").toAbsolutePath().normalize();
    private static final Path GROUP = EVALS.resolve("basic-skills-group.yaml");

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void theShippedGroupRunsAsOneRunWithPerTaskAndAggregateFigures() throws Exception {
        EvalRun group = stub.eval("--task", GROUP.toString(), "--db", dir.resolve("g.db").toString());

        assertThat(group.exit()).as("console:%n%s%nsummary:%n%s", group.err(), group.out()).isZero();
        assertThat(group.err()).contains("group basic_skills: arithmetic_mc (40 documents), units_mc (24 documents)")
                .contains("group basic_skills aggregates acc as lm-eval does, weighted by size");
        assertThat(group.out()).contains("answers:     64 of 64 stored").contains("accuracy (acc, scoring 1)")
                .containsPattern("task=arithmetic_mc: 0\\.\\d+ \\(95% CI [^\\n]*n=40\\)")
                .containsPattern("task=units_mc: [01]\\.\\d+ \\(95% CI [^\\n]*n=24\\)")
                .containsPattern("mean of the 2 task groups, each counted once [^\\n]*: [01]\\.\\d+ \\(95% CI");
        // The capability check, then one request per document of both tasks.
        assertThat(stub.requestCount()).isEqualTo(64 + 1);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(dir.resolve("g.db"))) {
            assertThat(store.recordCount()).isEqualTo(64);
        }
        assertThat(StreamedFigures.assertAgree(dir.resolve("g.db"))).isEqualTo(1);

        // Each task's figure in the group is the figure of that task run alone; the aggregates are
        // the mean over all 64 documents (by size) and the mean of the two tasks' figures.
        String arithmeticAlone = stub.eval("--task", EVALS.resolve("arithmetic-task.yaml").toString(), "--db",
                dir.resolve("a.db").toString()).out();
        String unitsAlone = stub.eval("--task", EVALS.resolve("units-task.yaml").toString(), "--db",
                dir.resolve("u.db").toString()).out();
        double arithmetic = accuracy(arithmeticAlone);
        double units = accuracy(unitsAlone);
        assertThat(figure(group.out(), "task=arithmetic_mc: ")).isEqualTo(arithmetic);
        assertThat(figure(group.out(), "task=units_mc: ")).isEqualTo(units);
        assertThat(accuracy(group.out())).isCloseTo((arithmetic * 40 + units * 24) / 64, org.assertj.core.data.Offset
                .offset(0.001));
        assertThat(figure(group.out(), "each counted once (unweighted mean over groups, SE sqrt(sum SE^2)/k): "))
                .isCloseTo((arithmetic + units) / 2, org.assertj.core.data.Offset.offset(0.001));
        // acc_norm likewise, per task and each task counted once (the shipped group's acc_norm aggregate).
        String norm = group.out().substring(group.out().indexOf("  acc_norm "));
        assertThat(norm).containsPattern("task=arithmetic_mc: 0\\.\\d+ \\(95% CI [^\\n]*n=40\\)")
                .containsPattern("task=units_mc: [01]\\.\\d+ \\(95% CI [^\\n]*n=24\\)");
        double arithmeticNorm = figure(arithmeticAlone.substring(arithmeticAlone.indexOf("  acc_norm ")), "MODEL: ");
        assertThat(figure(norm, "task=arithmetic_mc: ")).isEqualTo(arithmeticNorm);
        assertThat(figure(norm, "each counted once (unweighted mean over groups, SE sqrt(sum SE^2)/k): "))
                .isCloseTo((arithmeticNorm + figure(unitsAlone.substring(unitsAlone.indexOf("  acc_norm ")),
                        "MODEL: ")) / 2, org.assertj.core.data.Offset.offset(0.001));
    }

    @Test
    void aGroupFileWithWhatPanoptesDoesNotReadIsRefusedWithFileLineAndWhatToDo() throws Exception {
        Path group = dir.resolve("mixed_group.yaml");
        Files.writeString(group, String.join("\n",
                "group: mixed",
                "task:",
                "  - " + EVALS.resolve("arithmetic-task.yaml"),
                "  - task: units_mc",
                "    num_fewshot: 3",
                "  - no_such_task",
                "aggregate_metric_list:",
                "  - metric: acc",
                "    aggregation: !function utils.median",
                "  - metric: f1",
                "    aggregation: mean",
                "group_config_version: 2",
                ""));
        EvalRun r = stub.eval("--task", group.toString(), "--db", dir.resolve("m.db").toString());

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains(group + " line 9: aggregate_metric_list[0].aggregation is tagged !function")
                .contains(group + " line 12: 'group_config_version' is not a field of an lm-eval group file")
                .contains(group + " line 2, entry 2: an inline task configuration")
                .contains("list that file here")
                .contains(group + " line 2, entry 3: no task named 'no_such_task'")
                .contains(group + " line 7, entry 2: metric f1 is not one Panoptes computes");
        assertThat(stub.requestCount()).isZero();
        assertThat(dir.resolve("m.db")).doesNotExist();
    }

    @Test
    void aGroupsTasksScoredDifferentlyAreRefusedNamingBoth() throws Exception {
        Path norm = dir.resolve("units-norm.yaml");
        Files.writeString(norm, Files.readString(EVALS.resolve("units-task.yaml"))
                .replace("task: units_mc", "task: units_norm")
                .replace("units-task.jsonl", EVALS.resolve("units-task.jsonl").toString())
                .replace("  - metric: acc\n", "  - metric: acc_norm\n    aggregation: mean\n  - metric: acc\n"));
        Path group = dir.resolve("g.yaml");
        Files.writeString(group, "group: g\ntask:\n  - " + EVALS.resolve("arithmetic-task.yaml") + "\n  - "
                + norm.getFileName() + "\n");
        EvalRun r = stub.eval("--task", group.toString(), "--db", dir.resolve("d.db").toString());

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains(group + " line 2: task units_norm differs from arithmetic_mc in scoring acc_norm"
                + " (arithmetic_mc: acc)").contains("run the tasks that differ as a group of their own");
        assertThat(stub.requestCount()).isZero();
    }

    @Test
    void aGroupOfLoglikelihoodTasksPrintsEachTasksPerplexityTheSameAsTheTaskAlone() throws Exception {
        Path docs = Path.of("..", "control-core", "src", "test", "resources", "lm-eval", "lambada_openai_test.jsonl")
                .toAbsolutePath().normalize();
        List<String> lines = Files.readAllLines(docs);
        Files.write(dir.resolve("b.jsonl"), lines.subList(0, 3));
        for (String[] t : new String[][]{{"ll_a", docs.toString()}, {"ll_b", dir.resolve("b.jsonl").toString()}}) {
            Files.writeString(dir.resolve(t[0] + ".yaml"), String.join("\n", "task: " + t[0], "dataset_path: json",
                    "dataset_kwargs:", "  data_files:", "    test: " + t[1], "test_split: test",
                    "output_type: loglikelihood", "doc_to_text: \"{{text.split(' ')[:-1]|join(' ')}}\"",
                    "doc_to_target: \"{{' '+text.split(' ')[-1]}}\"", ""));
        }
        Path group = dir.resolve("ll_group.yaml");
        Files.writeString(group, String.join("\n", "group: ll_pair", "task:", "  - ll_a.yaml", "  - ll_b.yaml", ""));

        EvalRun r = stub.eval("--task", group.toString(), "--db", dir.resolve("g.db").toString());
        assertThat(r.exit()).as("console:%n%s%nsummary:%n%s", r.err(), r.out()).isZero();
        String perplexity = r.out().substring(r.out().indexOf("  perplexity ("));
        String alone = stub.eval("--task", dir.resolve("ll_b.yaml").toString(), "--db", dir.resolve("b.db").toString())
                .out();
        Matcher b = Pattern.compile(StubModelServer.MODEL + ": (\\d+\\.\\d+ \\(95% CI [^\\n]*n=3\\))")
                .matcher(alone.substring(alone.indexOf("  perplexity (")));
        assertThat(b.find()).as(alone).isTrue();
        assertThat(perplexity).contains("task=ll_b: " + b.group(1)).containsPattern("task=ll_a: [^\\n]*n=5\\)");
        assertThat(StreamedFigures.assertAgree(dir.resolve("g.db"))).isEqualTo(1);

        // Perplexity has no aggregate over a group's tasks: asking for one is refused, saying so.
        Files.writeString(group, String.join("\n", "group: ll_pair", "task:", "  - ll_a.yaml", "  - ll_b.yaml",
                "aggregate_metric_list:", "  - metric: perplexity", ""));
        EvalRun refused = stub.eval("--task", group.toString(), "--db", dir.resolve("r.db").toString());
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err()).contains("metric perplexity is not one Panoptes computes over a group's tasks")
                .contains("each task's perplexity in the run summary");
    }

    private static double accuracy(String summary) {
        Matcher m = Pattern.compile("accuracy \\(acc[^\\n]*\\n\\s+" + Pattern.quote(StubModelServer.MODEL)
                + ": ([01]\\.\\d+)").matcher(summary);
        assertThat(m.find()).as(summary).isTrue();
        return Double.parseDouble(m.group(1));
    }

    private static double figure(String summary, String label) {
        label = label.replace("MODEL", StubModelServer.MODEL);
        Matcher m = Pattern.compile(Pattern.quote(label) + "([01]\\.\\d+)").matcher(summary);
        assertThat(m.find()).as("%s in%n%s", label, summary).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
