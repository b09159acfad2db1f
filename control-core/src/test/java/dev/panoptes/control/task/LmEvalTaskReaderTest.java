package dev.panoptes.control.task;

import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.Scorers;
import dev.panoptes.control.suite.SuiteFormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * lm-eval task files read as lm-eval reads them: prompts with few-shot examples drawn by its
 * sampler, its own arc_easy.yaml and arc_challenge.yaml (an include) unchanged, generation tasks
 * with their filter and exact_match, the task's identity, and what cannot run refused with its place.
 */
class LmEvalTaskReaderTest {
    private static final Path EVALS = Path.of("..", "evals").toAbsolutePath().normalize();
    private static final Path LM_EVAL = Path.of("src", "test", "resources", "lm-eval").toAbsolutePath();

    @TempDir
    Path dir;

    private final LmEvalTaskReader reader = new LmEvalTaskReader();

    @Test
    void theShippedTaskPutsTwoExamplesDrawnAsLmEvalDrawsThemBeforeEachQuestion() throws Exception {
        LoadedTask task = reader.read(EVALS.resolve("arithmetic-task.yaml"), Map.of());

        assertThat(task.name()).isEqualTo("arithmetic_mc");
        assertThat(task.scorer()).isEqualTo("acc");
        assertThat(task.metrics()).containsExactly("acc", "acc_norm");
        List<Vignette> vs = task.suite().vignettes();
        assertThat(vs).hasSize(40);
        // random.Random(1234): sample(train, 2) gives [3, 0], then [0, 4].
        assertThat(vs.get(0).prompt()).isEqualTo("Question: What is 10 + 10?\nAnswer: 20\n\n"
                + "Question: What is 2 + 3?\nAnswer: 5\n\nQuestion: What is 36 - 53?\nAnswer:");
        assertThat(vs.get(1).prompt()).startsWith("Question: What is 2 + 3?\nAnswer: 5\n\n"
                + "Question: What is 8 - 1?\nAnswer: 7\n\nQuestion: What is 18 - 5?");
        assertThat(vs.get(0).id()).isEqualTo("0");
        assertThat(vs.get(0).choices().texts()).containsExactly("-16", "-7", "-18", "-17");
        assertThat(vs.get(0).choices().delimiter()).isEqualTo(" ");
        assertThat(vs.get(0).expected()).isEqualTo("3");
        assertThat(vs.get(0).metadata()).containsEntry("operation", "subtraction");
    }

    @Test
    void lmEvalsArcEasyRunsUnchangedTemplatesEvaluatedWithJinjava() throws Exception {
        LoadedTask task = reader.read(LM_EVAL.resolve("arc_easy.yaml"), Map.of("", LM_EVAL.resolve("arc_easy_test.jsonl")));

        List<Vignette> vs = task.suite().vignettes();
        assertThat(vs).hasSize(4);
        assertThat(vs.get(0).prompt()).isEqualTo("Question: What is 17 + 25?\nAnswer:");
        assertThat(vs.get(0).choices().texts()).containsExactly("41", "42", "52", "32");
        // doc_to_target: {{choices.label.index(answerKey)}}
        assertThat(vs).extracting(Vignette::expected).containsExactly("1", "0", "2", "3");
        assertThat(task.metrics()).containsExactly("acc", "acc_norm");
    }

    @Test
    void anIncludedBaseIsMergedWithLocalKeysWinningAndFewShotComesFromTheTrainingSplit() throws Exception {
        Path task = dir.resolve("arc_fewshot.yaml");
        Files.writeString(task, "include: " + LM_EVAL.resolve("arc_easy.yaml") + "\ntask: arc_fewshot\nnum_fewshot: 2\n");

        LoadedTask loaded = reader.read(task, Map.of("", LM_EVAL.resolve("arc_easy_test.jsonl"),
                "train", LM_EVAL.resolve("arc_easy_train.jsonl")));

        assertThat(loaded.name()).isEqualTo("arc_fewshot");
        // random.Random(1234).sample(range(3), 2) gives [1, 0].
        assertThat(loaded.suite().vignettes().get(0).prompt()).isEqualTo("Question: Which is a mammal?\nAnswer: whale"
                + "\n\nQuestion: What is 1 + 1?\nAnswer: 2\n\nQuestion: What is 17 + 25?\nAnswer:");
        // lm-eval's own include: arc_challenge.yaml includes arc_easy.yaml.
        assertThat(reader.read(LM_EVAL.resolve("arc_challenge.yaml"), Map.of("", LM_EVAL.resolve(
                "arc_easy_test.jsonl"))).name()).isEqualTo("arc_challenge");
    }

    @Test
    void examplesFromTheEvaluatedSplitLeaveTheEvaluatedDocumentOutAsLmEvalsSamplerDoes() throws Exception {
        Path task = dir.resolve("self.yaml");
        Files.writeString(task, "include: " + LM_EVAL.resolve("arc_easy.yaml") + "\nfewshot_split: test\nnum_fewshot: 2\n");

        List<Vignette> vs = reader.read(task, Map.of("", LM_EVAL.resolve("arc_easy_test.jsonl"))).suite().vignettes();

        // sample(docs, 3) without the document itself, first 2: [3, 2], [0, 2], [0, 3], [1, 0].
        assertThat(vs.get(0).prompt()).startsWith("Question: What is 40 - 12?\nAnswer: 28\n\n"
                + "Question: Which gas do plants take in to make sugar?\nAnswer: carbon dioxide\n\n");
        assertThat(vs.get(3).prompt()).startsWith("Question: What is 9 * 3?\nAnswer: 27\n\n"
                + "Question: What is 17 + 25?\nAnswer: 42\n\nQuestion: What is 40 - 12?");
    }

    @Test
    void theTasksIdentityChangesWithItsDataAndItsYamlButNotWithTheFilesPlace() throws Exception {
        Path data = dir.resolve("test.jsonl");
        Files.copy(LM_EVAL.resolve("arc_easy_test.jsonl"), data);
        String first = reader.read(LM_EVAL.resolve("arc_easy.yaml"), Map.of("", data)).suite().sha256();
        Path moved = dir.resolve("copy.jsonl");
        Files.copy(data, moved);
        assertThat(reader.read(LM_EVAL.resolve("arc_easy.yaml"), Map.of("", moved)).suite().sha256()).isEqualTo(first);

        Files.writeString(data, Files.readString(data).replace("What is 9 * 3?", "What is 9 * 4?"));
        assertThat(reader.read(LM_EVAL.resolve("arc_easy.yaml"), Map.of("", data)).suite().sha256()).isNotEqualTo(first);
        Path changed = dir.resolve("changed.yaml");
        Files.writeString(changed, Files.readString(LM_EVAL.resolve("arc_easy.yaml")).replace("version: 1.0", "version: 2.0"));
        assertThat(reader.read(changed, Map.of("", moved)).suite().sha256()).isNotEqualTo(first);
    }

    @Test
    void aGenerationTaskCarriesItsStopTokensAndScoresExactMatchAfterItsRegexFilter() throws Exception {
        Path docs = dir.resolve("gsm.jsonl");
        Files.writeString(docs, "{\"question\": \"What is 2 + 2?\", \"answer\": \"4\"}\n");
        Path task = dir.resolve("gen.yaml");
        Files.writeString(task, String.join("\n", "task: gen", "dataset_path: json", "dataset_kwargs:",
                "  data_files:", "    test: " + docs, "test_split: test", "output_type: generate_until",
                "doc_to_text: \"Q: {{question}}\\nA:\"", "doc_to_target: \"{{answer}}\"",
                "generation_kwargs:", "  until: [\"\\n\\n\", \"Q:\"]", "  max_gen_toks: 32", "  do_sample: false",
                "repeats: 2",
                "filter_list:", "  - name: strict", "    filter:", "      - function: regex",
                "        regex_pattern: \"The answer is (\\\\-?[0-9]+)\"", "      - function: take_first",
                "metric_list:", "  - metric: exact_match", "    ignore_case: true", "    ignore_punctuation: true",
                "    regexes_to_ignore: [\",\"]", ""));

        LoadedTask loaded = reader.read(task, Map.of());

        assertThat(loaded.stop()).containsExactly("\n\n", "Q:");
        assertThat(loaded.maxTokens()).isEqualTo(32);
        assertThat(loaded.temperature()).isEqualTo(0.0);
        assertThat(loaded.repeats()).isEqualTo(2);
        Vignette v = loaded.suite().vignettes().get(0);
        assertThat(v.prompt()).isEqualTo("Q: What is 2 + 2?\nA:");
        assertThat(v.expected()).isEqualTo("4");
        var scorer = Scorers.parse(loaded.scorer());
        assertThat(scorer.score("Let me think. The answer is 4.", "4").value()).isEqualTo(1.0);
        assertThat(scorer.score("The answer is 5", "4").value()).isEqualTo(0.0);
        assertThat(scorer.score("4", "4").value()).as("no match: the fallback, [invalid]").isEqualTo(0.0);
    }

    @Test
    void whatCannotRunIsRefusedWithItsFileLineAndWhatToDo() throws Exception {
        Path base = dir.resolve("base.yaml");
        Files.writeString(base, "dataset_path: cais/mmlu\nprocess_results: !function utils.process\n");
        Path task = dir.resolve("task.yaml");
        Files.writeString(task, String.join("\n", "include: base.yaml", "task: t", "test_split: test",
                "output_type: multiple_choice", "doc_to_text: question", "doc_to_target: answer",
                "doc_to_choice: choices", "doc_to_frobnicate: x", "metric_list:", "  - metric: f1", ""));

        assertThatThrownBy(() -> reader.read(task, Map.of()))
                .isInstanceOf(SuiteFormatException.class)
                .satisfies(e -> assertThat(((SuiteFormatException) e).problems()).anySatisfy(p -> assertThat(p)
                                .contains("base.yaml line 2: process_results is not supported: it scores with Python"))
                        .anySatisfy(p -> assertThat(p).contains("task.yaml line 8: unknown field 'doc_to_frobnicate'"))
                        .anySatisfy(p -> assertThat(p).contains("task.yaml line 9: metric f1 is not supported")));
    }

    @Test
    void lmEvalsLambadaOpenaiRunsUnchangedAsOneContinuationPerDocumentWithoutTheTargetDelimiter() throws Exception {
        LoadedTask task = reader.read(LM_EVAL.resolve("lambada_openai.yaml"),
                Map.of("", LM_EVAL.resolve("lambada_openai_test.jsonl")));

        assertThat(task.name()).isEqualTo("lambada_openai");
        assertThat(task.outputType()).isEqualTo("loglikelihood");
        assertThat(task.isLoglikelihood()).isTrue();
        assertThat(task.isMultipleChoice()).isFalse();
        assertThat(task.metrics()).containsExactly("perplexity", "acc");
        assertThat(task.scorer()).isEqualTo("acc");
        assertThat(task.temperature()).isEqualTo(0.0);
        assertThat(task.maxTokens()).isNull();
        List<Vignette> vs = task.suite().vignettes();
        assertThat(vs).hasSize(5);
        Vignette first = vs.get(0);
        // doc_to_text: every word but the last; doc_to_target: ' ' + the last word.
        assertThat(first.prompt()).endsWith("she held up the pot and said it was");
        assertThat(first.prompt()).doesNotEndWith(" ");
        // lm-eval asks (ctx, doc_to_target(doc)): no target_delimiter before the continuation, so
        // the template's own space is the only one.
        assertThat(first.choices().texts()).containsExactly(" tea");
        assertThat(first.choices().delimiter()).isEmpty();
        assertThat(first.choices().continuation(0)).isEqualTo(" tea");
        assertThat(first.expected()).isEqualTo("0");
        assertThat(vs).extracting(v -> v.choices().texts().get(0))
                .containsExactly(" tea", " fish", " pass", " note", " light");
    }

    @Test
    void aLoglikelihoodTasksMetricsAndAggregationsAreLmEvalsAndOthersAreRefused() throws Exception {
        Files.writeString(dir.resolve("docs.jsonl"), "{\"text\": \"a b\", \"ending\": \"c\"}\n");
        Path plain = dir.resolve("plain.yaml");
        Files.writeString(plain, String.join("\n", "task: ll_default", "dataset_path: json",
                "dataset_kwargs:", "  data_files:", "    test: docs.jsonl", "test_split: test",
                "output_type: loglikelihood", "doc_to_text: text", "doc_to_target: ending", ""));
        LoadedTask loaded = reader.read(plain, Map.of());
        // lm-eval's DEFAULT_METRIC_REGISTRY for loglikelihood.
        assertThat(loaded.metrics()).containsExactly("perplexity", "acc");
        // doc_to_target a field: the continuation is its text as it is, not " c".
        assertThat(loaded.suite().vignettes().get(0).choices().continuation(0)).isEqualTo("c");

        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, String.join("\n", "task: ll_bad", "dataset_path: json",
                "dataset_kwargs:", "  data_files:", "    test: docs.jsonl", "test_split: test",
                "output_type: loglikelihood", "doc_to_text: text", "doc_to_target: ending",
                "generation_kwargs:", "  until: [\"\\n\"]", "metric_list:", "  - metric: acc_norm",
                "  - metric: perplexity", "    aggregation: mean", ""));
        assertThatThrownBy(() -> reader.read(bad, Map.of()))
                .isInstanceOf(SuiteFormatException.class)
                .satisfies(e -> assertThat(((SuiteFormatException) e).problems())
                        .anySatisfy(p -> assertThat(p).contains("bad.yaml line 10: generation_kwargs is for"
                                + " generate_until tasks; a loglikelihood task generates nothing"))
                        .anySatisfy(p -> assertThat(p).contains("bad.yaml line 12: metric acc_norm is not supported"
                                + " for loglikelihood (perplexity and acc are)"))
                        .anySatisfy(p -> assertThat(p).contains("aggregation mean of perplexity is not supported"
                                + " (perplexity is)")));
    }

    @Test
    void loglikelihoodRollingIsStillRefusedAtItsOutputTypeSayingWhatToDoInstead() throws Exception {
        Path task = dir.resolve("wikitext.yaml");
        Files.writeString(task, String.join("\n", "task: wikitext_like", "dataset_path: json",
                "dataset_kwargs:", "  data_files:", "    test: docs.jsonl", "test_split: test",
                "output_type: loglikelihood_rolling", "doc_to_text: \"\"", "doc_to_target: page", ""));
        Files.writeString(dir.resolve("docs.jsonl"), "{\"page\": \"a b c\"}\n");

        assertThatThrownBy(() -> reader.read(task, Map.of()))
                .isInstanceOf(SuiteFormatException.class)
                .satisfies(e -> assertThat(((SuiteFormatException) e).problems()).anySatisfy(p -> assertThat(p)
                        .contains("wikitext.yaml line 7: output_type loglikelihood_rolling is not supported")
                        .contains("loglikelihood (of one continuation: perplexity, acc)")
                        .contains("word_perplexity").contains("local-completions")));
    }

    @Test
    void aMultipleChoiceTaskIsAskedAtTemperatureZeroAsItsLoglikelihoodRequestsAre() throws Exception {
        Path task = Path.of("..", "evals", "arithmetic-task.yaml").toAbsolutePath().normalize();
        assertThat(reader.read(task, Map.of()).temperature()).isEqualTo(0.0);
    }
}
