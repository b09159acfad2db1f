package dev.panoptes.control.task;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Choices;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.suite.Suite;
import dev.panoptes.control.suite.SuiteFormatException;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A task's documents as vignettes, with the prompts lm-eval builds ({@code fewshot_context} in
 * plain text): the description, then for each few-shot example its text, the target delimiter,
 * its answer and the few-shot delimiter, then the document's text. Few-shot examples are drawn as
 * lm-eval's default sampler draws them: one {@code random.Random(1234)} for the task, and for each
 * document in order {@code sample(fewshot_docs, n)}, or {@code n + 1} with the document itself
 * left out when the examples come from the evaluated split ({@link PythonRandom} reproduces
 * CPython's generator exactly).
 *
 * <p>Not thread-safe: one per task read.
 */
final class TaskPrompts {
    /** lm-eval's default few-shot seed ({@code fewshot_random_seed}). */
    static final long FEWSHOT_SEED = 1234;
    private static final ObjectMapper JSON = new ObjectMapper();
    private final TaskConfig config;
    private final DocTemplates templates;

    TaskPrompts(TaskConfig config, DocTemplates templates) {
        this.config = config;
        this.templates = templates;
    }

    LoadedTask build(Path file, Map<String, List<Map<String, Object>>> docs, MessageDigest identity,
                     List<String> problems) throws SuiteFormatException {
        List<Map<String, Object>> evalDocs = docs.get(config.evalSplit());
        if (evalDocs.isEmpty()) {
            throw new SuiteFormatException(file.toString(), List.of("the " + config.evalSplit()
                    + " split's data file holds no documents"));
        }
        List<Map<String, Object>> shots = docs.getOrDefault(config.fewshotSplit(), List.of());
        int n = config.numFewshot();
        int draw = config.samplerSkipsEvalDoc() ? n + 1 : n;
        if (n > 0 && shots.size() < draw) {
            throw new SuiteFormatException(file.toString(), List.of("num_fewshot " + n + " needs at least " + draw
                    + " documents in split " + config.fewshotSplit() + ", which has " + shots.size()));
        }
        PythonRandom rnd = new PythonRandom(FEWSHOT_SEED);
        List<Vignette> vignettes = new ArrayList<>(evalDocs.size());
        String scorer = scorer();
        for (int i = 0; i < evalDocs.size(); i++) {
            Map<String, Object> doc = evalDocs.get(i);
            String where = "document " + i + " of split " + config.evalSplit();
            try {
                StringBuilder context = new StringBuilder();
                String description = config.description().isEmpty() ? "" : describe(doc);
                context.append(description);
                if (n > 0) {
                    List<Map<String, Object>> drawn = rnd.sample(shots, draw);
                    if (config.samplerSkipsEvalDoc()) {
                        drawn = new ArrayList<>(drawn);
                        drawn.removeIf(doc::equals);
                        drawn = drawn.subList(0, Math.min(n, drawn.size()));
                    }
                    for (Map<String, Object> shot : drawn) {
                        String answer = answerText(shot);
                        context.append(text(shot));
                        if (answer != null && !answer.isEmpty()) {
                            context.append(config.targetDelimiter()).append(answer).append(config.fewshotDelimiter());
                        }
                    }
                }
                context.append(text(doc));
                vignettes.add(vignette(Integer.toString(i), context.toString(), doc, scorer));
            } catch (DocTemplates.TemplateException | IllegalArgumentException e) {
                problems.add(where + ": " + e.getMessage());
                if (problems.size() >= 10) {
                    break;
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new SuiteFormatException(file.toString(), problems);
        }
        for (Vignette v : vignettes) {
            identity.update(("vignette " + json(List.of(v.id(), v.prompt(), v.expected() == null ? "" : v.expected(),
                    v.choices() == null ? List.of() : v.choices().texts(),
                    v.choices() == null ? "" : v.choices().delimiter())) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        String sha = HexFormat.of().formatHex(identity.digest());
        Suite suite = new Suite(config.name(), vignettes, sha, List.of(), notes());
        return new LoadedTask(config.name(), config.outputType(), suite, scorer, config.temperature(),
                config.maxGenToks(), config.until(), config.repeats(), config.metrics());
    }

    private List<String> notes() {
        List<String> notes = new ArrayList<>();
        if (config.repeats() > 1) {
            notes.add("repeats " + config.repeats() + ": each document is asked " + config.repeats() + " times, as"
                    + " epochs, and every answer is scored (lm-eval's take_first would score the first only)");
        }
        return notes;
    }

    private String describe(Map<String, Object> doc) throws DocTemplates.TemplateException {
        String d = config.description();
        return doc.containsKey(d) ? String.valueOf(doc.get(d)) : templates.render(d, doc);
    }

    /**
     * The run's scorer: the first choice metric; acc for a loglikelihood task (a one-choice
     * vignette's acc is lm-eval's is_greedy, and perplexity is no per-answer score but the
     * figure over them all); or exact_match with its options and filter.
     */
    private String scorer() {
        if (config.isLoglikelihood()) {
            return "acc";
        }
        if (config.isMultipleChoice()) {
            return config.metrics().isEmpty() ? "acc" : config.metrics().get(0);
        }
        Map<String, Object> options = new LinkedHashMap<>(config.exactMatch() == null ? Map.of() : config.exactMatch());
        if (config.filter() != null) {
            options.put("regex", config.filter());
        }
        return "exact_match:" + json(options);
    }

    private Vignette vignette(String id, String prompt, Map<String, Object> doc, String scorer)
            throws DocTemplates.TemplateException {
        if (prompt.isEmpty()) {
            throw new IllegalArgumentException("the prompt is empty (doc_to_text gave nothing)");
        }
        Map<String, Object> metadata = new LinkedHashMap<>(doc);
        if (config.isMultipleChoice()) {
            List<String> choices = choices(doc);
            Object target = target(doc);
            int index = targetIndex(target, choices);
            return Vignette.multipleChoice(id, prompt, new Choices(choices, config.targetDelimiter()), index,
                    metadata);
        }
        if (config.isLoglikelihood()) {
            return Vignette.multipleChoice(id, prompt, new Choices(List.of(continuation(doc)), ""), 0, metadata);
        }
        Object target = target(doc);
        String expected = target instanceof List<?> l ? (l.isEmpty() ? "" : String.valueOf(l.get(0)))
                : String.valueOf(target);
        return new Vignette(id, prompt, expected, metadata, List.of(), null);
    }

    /**
     * A loglikelihood task's continuation: doc_to_target as it is, with no target_delimiter before
     * it. lm-eval's ConfigurableTask.construct_requests asks {@code (ctx, self.doc_to_target(doc))}
     * for this output type, where multiple_choice asks {@code f"{target_delimiter}{cont}"} per
     * choice; so lambada's target template writes its own leading space.
     */
    private String continuation(Map<String, Object> doc) throws DocTemplates.TemplateException {
        Object target = target(doc);
        if (target instanceof List<?> || target instanceof Map<?, ?>) {
            throw new IllegalArgumentException("doc_to_target gave " + target + "; a loglikelihood task's target is"
                    + " the one continuation whose log-likelihood is measured: a text");
        }
        String text = target == null ? "" : String.valueOf(target);
        if (text.isEmpty()) {
            throw new IllegalArgumentException("doc_to_target gave an empty continuation; a loglikelihood task"
                    + " measures the log-likelihood of a non-empty one");
        }
        return text;
    }

    private String text(Map<String, Object> doc) throws DocTemplates.TemplateException {
        Object spec = config.docToText();
        if (spec instanceof String s) {
            Object v = doc.containsKey(s) ? doc.get(s) : templates.render(s, doc);
            return String.valueOf(v);
        }
        throw new IllegalArgumentException("doc_to_text is a field name or a Jinja template, got " + spec);
    }

    /** doc_to_target as lm-eval reads it: an int, a field, or a template (digits read as an index for choices). */
    private Object target(Map<String, Object> doc) throws DocTemplates.TemplateException {
        Object spec = config.docToTarget();
        if (spec instanceof Number || spec instanceof List<?>) {
            return spec;
        }
        String s = String.valueOf(spec);
        if (doc.containsKey(s)) {
            return doc.get(s);
        }
        Object v = templates.value(s, doc);
        if (v instanceof String text && config.isMultipleChoice() && !text.isEmpty() && text.chars().allMatch(
                Character::isDigit)) {
            return Long.parseLong(text);
        }
        return v;
    }

    private List<String> choices(Map<String, Object> doc) throws DocTemplates.TemplateException {
        Object spec = config.docToChoice();
        Object v = spec instanceof List<?> ? spec : templates.value(String.valueOf(spec), doc);
        if (v instanceof String rendered) {
            try {
                v = JSON.readValue(rendered, List.class);
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException("doc_to_choice gave '" + rendered + "', not a list of choices;"
                        + " write it as a field holding a list, a YAML list, or one Jinja expression such as"
                        + " {{[sol1, sol2]}}");
            }
        }
        if (!(v instanceof List<?> list)) {
            throw new IllegalArgumentException("doc_to_choice gave " + v + ", not a list of choices");
        }
        List<String> out = new ArrayList<>(list.size());
        for (Object o : list) {
            out.add(String.valueOf(o));
        }
        return out;
    }

    private static int targetIndex(Object target, List<String> choices) {
        if (target instanceof Number num) {
            int i = num.intValue();
            if (i < 0 || i >= choices.size()) {
                throw new IllegalArgumentException("doc_to_target gave index " + i + ", but there are " + choices.size()
                        + " choices");
            }
            return i;
        }
        String s = String.valueOf(target);
        int i = choices.indexOf(s);
        if (i < 0) {
            throw new IllegalArgumentException("doc_to_target gave '" + s + "', which is neither a choice's index"
                    + " nor one of the choices " + choices);
        }
        return i;
    }

    /** The answer a few-shot example shows: the right choice's text, or the target's text. */
    private String answerText(Map<String, Object> shot) throws DocTemplates.TemplateException {
        Object a = target(shot);
        if (a == null) {
            return null;
        }
        if (config.docToChoice() != null && a instanceof Number num) {
            return choices(shot).get(num.intValue());
        }
        if (a instanceof List<?> l) {
            return l.isEmpty() ? null : String.valueOf(l.get(0));
        }
        return String.valueOf(a);
    }

    private static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
