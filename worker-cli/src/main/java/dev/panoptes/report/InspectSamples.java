package dev.panoptes.report;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.panoptes.control.SystemMessages;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.control.suite.RunManifest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One stored answer as an Inspect AI {@code EvalSample}: the input as chat messages, the target,
 * the model's output, the score under the scorer's name, the vignette's metadata and the token
 * usage; and the chat messages and usage objects that the log's other parts share with it.
 *
 * <p>The store keeps a chat vignette's prompt as {@code role: content} lines
 * ({@code Vignette.displayPrompt}); those lines are split back into messages at each line that
 * starts with a known role. A plain prompt that itself starts with such a line is split the same
 * way, which changes how it is shown, not what it says. The run's system prompt (from its
 * manifest) comes first.
 *
 * <p>An answer asked by log-likelihood (multiple choice) is shown as Inspect shows a
 * multiple-choice sample: the sample's {@code choices} (each choice's text), its {@code target}
 * the right choice's letter ({@code A} for the first), the output {@code ANSWER: X} with the
 * chosen letter (the highest log-likelihood, or per character for an {@code acc_norm} scorer, per
 * byte for {@code acc_bytes}), the score's {@code answer} that letter, and every choice's
 * {@code [loglikelihood, is_greedy]} under {@code metadata.panoptes.loglikelihoods}. An answer to
 * one continuation (a loglikelihood task's) has no choices: its {@code target} is the
 * continuation and its output {@code log-likelihood LL, is_greedy True|False}.
 *
 * <p>Stateless; any thread.
 */
final class InspectSamples {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final Pattern ROLE_LINE = Pattern.compile("(?m)^(system|user|assistant): ");

    private InspectSamples() {
    }

    /**
     * The sample of one answer.
     *
     * @param scorer the score's name (the run's scorer); null when the run is unscored
     */
    static ObjectNode sample(SampleRow row, RunManifest manifest, String scorer) {
        return sample(row, manifest, scorer, null);
    }

    /**
     * The sample of one answer; a sandboxed answer's transcript gives its messages (tool calls and
     * tool messages included) and its events ({@link InspectTranscript}).
     *
     * @param scorer   the score's name (the run's scorer); null when the run is unscored
     * @param runStart when the run started: the time of transcript events whose completion the
     *                 worker did not record; null for the epoch
     */
    static ObjectNode sample(SampleRow row, RunManifest manifest, String scorer, java.time.Instant runStart) {
        ObjectNode sample = JSON.objectNode();
        sample.put("id", row.vignetteId());
        sample.put("epoch", epoch(row));
        ArrayNode input = input(row.prompt(), manifest == null ? null : manifest.systemPrompt());
        sample.set("input", input);
        ChoiceLoglikelihoods lls = choiceAnswer(row);
        String target = row.expected() == null ? "" : row.expected();
        String response = row.response();
        if (lls != null && lls.isContinuation()) {
            // A loglikelihood task's continuation: no choice to pick, so no letters. The target is the
            // continuation, the completion what was measured of it.
            target = lls.continuations().isEmpty() ? target : lls.continuations().get(0);
            response = continuationOutput(lls);
        } else if (lls != null) {
            int n = lls.loglikelihoods().size();
            if (!lls.continuations().isEmpty()) {
                ArrayNode texts = sample.putArray("choices");
                for (int i = 0; i < n; i++) {
                    String c = lls.continuations().get(i);
                    // The continuation is the delimiter, then the choice: its last chars[i] code points.
                    texts.add(c.substring(c.offsetByCodePoints(c.length(), -lls.chars().get(i))));
                }
            }
            int want = Vignette.choiceIndex(row.expected(), n);
            target = want < 0 ? target : letter(want);
            response = "ANSWER: " + letter(chosen(lls, scorer));
        }
        sample.put("target", target);
        ArrayNode messages = input.deepCopy();
        ObjectNode output = JSON.objectNode();
        output.put("model", row.apiModel() == null ? row.model() : row.apiModel());
        InspectTranscript transcript = InspectTranscript.of(row, output.get("model").asText(), runStart);
        if (transcript != null) {
            // The whole chat: the model's turns with their tool calls, and the tools' messages.
            transcript.appendMessages(messages);
        }
        ArrayNode choices = output.putArray("choices");
        if (!row.failed() && response != null) {
            ObjectNode answer = message("assistant", response, "generate");
            answer.put("model", output.get("model").asText());
            if (transcript == null) {
                messages.add(answer);
            }
            ObjectNode choice = choices.addObject();
            choice.set("message", answer.deepCopy());
            choice.put("stop_reason", stopReason(row.finishReason()));
            output.put("completion", response);
        } else {
            output.put("completion", "");
        }
        ObjectNode usage = usage(row.promptTokens(), row.completionTokens());
        if (usage != null) {
            output.set("usage", usage);
        }
        if (row.latencyMs() != null) {
            output.put("time", row.latencyMs() / 1000.0);
        }
        sample.set("messages", messages);
        sample.set("output", output);
        Double value = row.figureScore();
        if (scorer != null && value != null) {
            ObjectNode score = sample.putObject("scores").putObject(scorer);
            score.put("value", value);
            String answer = scoreAnswer(row, scorer);
            if (answer != null) {
                score.put("answer", answer);
            }
            String explanation = row.failed() ? "no answer: " + row.error() : row.explanation();
            if (explanation != null) {
                score.put("explanation", explanation);
            }
        }
        sample.set("metadata", metadata(row, lls));
        sample.putObject("store");
        if (transcript != null) {
            sample.set("events", transcript.events(input));
        } else {
            sample.putArray("events");
        }
        ObjectNode modelUsage = sample.putObject("model_usage");
        if (usage != null) {
            modelUsage.set(row.model(), usage.deepCopy());
        }
        if (row.latencyMs() != null) {
            sample.put("total_time", row.latencyMs() / 1000.0);
            sample.put("working_time", row.latencyMs() / 1000.0);
        }
        sample.putObject("attachments");
        if (row.failed()) {
            ObjectNode error = sample.putObject("error");
            error.put("message", row.error());
            error.put("traceback", "");
            error.put("traceback_ansi", "");
        }
        return sample;
    }

    /**
     * The sample's epoch as Inspect numbers it: from 1 (its task runner asks
     * {@code range(1, epochs + 1)}, {@code read_eval_sample} reads epoch 1 unless told), where a
     * run stores its epochs from 0. Named {@code samples/<id>_epoch_<epoch>.json} in a {@code .eval}
     * log.
     */
    static int epoch(SampleRow row) {
        return row.epoch() + 1;
    }

    /**
     * The chat sent: the system prompt when there is one, then the stored prompt's messages; a
     * prompt that starts with a system message of its own has it joined to the run's, as it was
     * sent ({@link SystemMessages}).
     */
    static ArrayNode input(String prompt, String systemPrompt) {
        ArrayNode messages = JSON.arrayNode();
        List<String[]> turns = turns(prompt == null ? "" : prompt);
        if (systemPrompt != null && !systemPrompt.isEmpty()) {
            if (!turns.isEmpty() && "system".equals(turns.get(0)[0])) {
                turns.set(0, new String[]{"system", systemPrompt + SystemMessages.SEPARATOR + turns.get(0)[1]});
            } else {
                messages.add(message("system", systemPrompt, "input"));
            }
        }
        for (String[] turn : turns) {
            messages.add(message(turn[0], turn[1], "input"));
        }
        return messages;
    }

    /** Role and content of each turn of a stored prompt; one user turn when it has no role lines. */
    static List<String[]> turns(String prompt) {
        List<String[]> turns = new ArrayList<>();
        Matcher m = ROLE_LINE.matcher(prompt);
        if (!m.find() || m.start() != 0) {
            turns.add(new String[]{"user", prompt});
            return turns;
        }
        String role = m.group(1);
        int contentStart = m.end();
        while (m.find()) {
            // The newline before the next role line separates turns; it is not content.
            turns.add(new String[]{role, prompt.substring(contentStart, m.start() - 1)});
            role = m.group(1);
            contentStart = m.end();
        }
        turns.add(new String[]{role, prompt.substring(contentStart)});
        return turns;
    }

    /** Inspect's {@code ModelUsage}; null when neither count is known. */
    static ObjectNode usage(Long input, Long output) {
        if (input == null && output == null) {
            return null;
        }
        long in = input == null ? 0 : input;
        long out = output == null ? 0 : output;
        ObjectNode usage = JSON.objectNode();
        usage.put("input_tokens", in);
        usage.put("output_tokens", out);
        usage.put("total_tokens", in + out);
        return usage;
    }

    private static ObjectNode message(String role, String content, String source) {
        ObjectNode message = JSON.objectNode();
        message.put("role", role);
        message.put("content", content);
        message.put("source", source);
        return message;
    }

    /** The OpenAI finish reasons in Inspect's terms ({@code StopReason}). */
    private static String stopReason(String finishReason) {
        if (finishReason == null) {
            return "unknown";
        }
        return switch (finishReason.toLowerCase(Locale.ROOT)) {
            case "stop" -> "stop";
            case "length" -> "max_tokens";
            case "tool_calls", "function_call" -> "tool_calls";
            case "content_filter" -> "content_filter";
            default -> "unknown";
        };
    }

    /**
     * The answer a score names, as Inspect's scorers name it: the chosen choice's letter for a
     * multiple-choice answer (as its {@code choice} scorer does), a loglikelihood task's
     * log-likelihood and is_greedy for an answer to one continuation, else the stored response; null
     * when there is none. The sample's score and the log's reductions both say this.
     *
     * @param scorer the run's scorer, which says how the choice is made ({@code acc_norm}: per
     *               character, {@code acc_bytes}: per byte, else the highest log-likelihood)
     */
    static String scoreAnswer(SampleRow row, String scorer) {
        ChoiceLoglikelihoods lls = choiceAnswer(row);
        if (lls != null && lls.isContinuation()) {
            return continuationOutput(lls);
        }
        return lls != null ? letter(chosen(lls, scorer)) : row.response();
    }

    /** What a loglikelihood task's answer says in place of a completion: its log-likelihood and is_greedy. */
    private static String continuationOutput(ChoiceLoglikelihoods lls) {
        return "log-likelihood " + PythonJson.floatRepr(lls.loglikelihoods().get(0)) + ", is_greedy "
                + (lls.greedy().get(0) ? "True" : "False");
    }

    /** The choice the scorer's way of comparing log-likelihoods picks. */
    private static int chosen(ChoiceLoglikelihoods lls, String scorer) {
        return "acc_norm".equals(scorer) ? lls.chosenPerChar()
                : "acc_bytes".equals(scorer) ? lls.chosenPerByte() : lls.chosen();
    }

    /** The stored log-likelihood answer of a multiple-choice sample; null for any other. */
    private static ChoiceLoglikelihoods choiceAnswer(SampleRow row) {
        if (row.failed() || row.response() == null || !ChoiceMetrics.isChoiceAnswer(row.response())) {
            return null;
        }
        try {
            return ChoiceLoglikelihoods.parse(row.response());
        } catch (IllegalArgumentException e) {
            // Not such an answer after all: shown as the text it is.
            return null;
        }
    }

    /** Inspect's letter of choice {@code i}: A to Z, then the index itself. */
    static String letter(int i) {
        return i < 26 ? String.valueOf((char) ('A' + i)) : Integer.toString(i);
    }

    /** The vignette's metadata, and where the answer came from under {@code panoptes}. */
    private static ObjectNode metadata(SampleRow row, ChoiceLoglikelihoods lls) {
        ObjectNode metadata = JSON.objectNode();
        for (Map.Entry<String, Object> e : row.metadata().entrySet()) {
            metadata.putPOJO(e.getKey(), e.getValue());
        }
        ObjectNode panoptes = JSON.objectNode();
        putIfKnown(panoptes, "run_id", row.runId());
        putIfKnown(panoptes, "job_id", row.jobId());
        putIfKnown(panoptes, "worker_id", row.workerId());
        putIfKnown(panoptes, "finish_reason", row.finishReason());
        if (row.latencyMs() != null) {
            panoptes.put("latency_ms", row.latencyMs());
        }
        putIfKnown(panoptes, "error", row.error());
        if (lls != null) {
            ArrayNode resps = panoptes.putArray("loglikelihoods");
            for (int i = 0; i < lls.loglikelihoods().size(); i++) {
                resps.addArray().add(lls.loglikelihoods().get(i)).add(lls.greedy().get(i));
            }
        }
        String limit = dev.panoptes.control.Transcripts.limit(row.transcript());
        if (limit != null) {
            // The limit a sandboxed sample met (turns, tokens, time): its outcome, scored as it stands.
            panoptes.put("limit", limit);
        }
        if (row.cached()) {
            // Served by the response cache: the answer of an earlier run, no model call in this one.
            panoptes.put("cached", true);
            putIfKnown(panoptes, "cached_from", row.cachedFrom());
        }
        if (!metadata.has("panoptes")) {
            metadata.set("panoptes", panoptes);
        }
        return metadata;
    }

    private static void putIfKnown(ObjectNode node, String name, String value) {
        if (value != null) {
            node.put(name, value);
        }
    }
}
