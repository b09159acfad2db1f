package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Choices;
import dev.panoptes.control.FailureScope;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.eval.LoglikelihoodRequest;
import dev.panoptes.eval.ModelResponse;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.message.BasicHttpResponse;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * A log-likelihood answer is read in one streaming pass that keeps of each choice only the arrays
 * it scores: the scores, the greedy flags and every refusal (its message and whose fault) are what
 * they were when the body was one tree, and what is skipped is still read, so that a body cut
 * short anywhere is malformed.
 */
class TextCompletionsParseTest {
    private final TextCompletions codec = new TextCompletions(new ObjectMapper());
    /** Context "a b" (3 code points); choice 0 "a b c", choice 1 "a b d". */
    private final LoglikelihoodRequest request = new LoglikelihoodRequest("a b", new Choices(List.of("c", "d"), " "),
            SpecParams.NONE);

    private static Answer answer(String body) {
        return new Answer(new Message<HttpResponse, byte[]>(new BasicHttpResponse(200),
                body.getBytes(StandardCharsets.UTF_8)));
    }

    /** A choice of "a b X": tokens "a", " b", " X", and the generated "!" after the prompt. */
    private static String choice(int index, String lastLogprob, String top) {
        return ("{\"index\":" + index + ",\"text\":\"a b x!\",\"logprobs\":{\"tokens\":[\"a\",\" b\",\" x\",\"!\"],"
                + "\"token_logprobs\":[null,-1.5,-0.25,-3],\"top_logprobs\":[null,{\" b\":-1.5},{\" x\":" + top + "},"
                + "{\"!\":-3}],\"text_offset\":[0,1,3,5]},\"finish_reason\":\"length\"}")
                .replaceFirst("-0\\.25", lastLogprob);
    }

    private ChoiceLoglikelihoods scores(String body) throws Exception {
        ModelResponse r = codec.parseLoglikelihoods(answer(body), request);
        return ChoiceLoglikelihoods.parse(r.text());
    }

    @Test
    void scoresTheContinuationsInIndexOrderWithTheirGreedyFlags() throws Exception {
        ModelResponse r = codec.parseLoglikelihoods(answer("{\"model\":\"m\",\"choices\":[" + choice(1, "-2", "-0.5")
                + "," + choice(0, "-0.25", "-0.25") + "],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":2}}"),
                request);
        ChoiceLoglikelihoods s = ChoiceLoglikelihoods.parse(r.text());

        assertThat(s.loglikelihoods().get(0)).isCloseTo(-0.25, within(1e-12));
        assertThat(s.loglikelihoods().get(1)).isCloseTo(-2.0, within(1e-12));
        assertThat(s.greedy()).containsExactly(true, false);
        assertThat(r.model()).isEqualTo("m");
        assertThat(r.usage().promptTokens()).isEqualTo(8);
    }

    @Test
    void aChoiceWithoutAnIndexIsTakenByItsPositionAndAnEmptyOrMissingTopIsNotGreedy() throws Exception {
        String first = choice(0, "-0.25", "-0.25").replace("\"index\":0,", "");
        String second = choice(1, "-0.25", "-0.25").replace("{\" x\":-0.25}", "{}");
        ChoiceLoglikelihoods s = scores("{\"choices\":[" + first + "," + second + "]}");
        assertThat(s.greedy()).containsExactly(true, false);
    }

    @Test
    void aBodyCutShortAfterTheChoicesIsMalformed() {
        String body = "{\"choices\":[" + choice(0, "-1", "-1") + "," + choice(1, "-1", "-1") + "],\"usage\":{\"pro";
        assertThatThrownBy(() -> scores(body))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.TRANSIENT))
                .hasMessageStartingWith("malformed or truncated JSON in the response body; body starts: {\"choices\"");
    }

    @Test
    void theShapesRefusalsKeepTheirMessagesAndScopes() {
        assertRefused("[]", FailureScope.WORKER, "the response body is not a JSON object");
        assertRefused("{\"choices\":[]}", FailureScope.WORKER,
                "the response has no 'choices' of a text completion; body starts: {\"choices\":[]}");
        assertRefused("{\"choices\":[" + choice(0, "-1", "-1") + "]}", FailureScope.WORKER,
                "the answer has no choice 1 of the 2 prompts sent (one per choice): the server does not take a list"
                        + " of prompts");
        String both = "{\"choices\":[" + choice(0, "-1", "-1") + ",%s]}";
        assertRefused(String.format(both, "{\"index\":1,\"logprobs\":null}"), FailureScope.WORKER,
                "asked with echo and logprobs, it returned no log-probabilities at all; log-likelihood jobs need one"
                        + " log-probability per prompt token, as vLLM returns them");
        assertRefused(String.format(both, "{\"index\":1,\"logprobs\":{\"content\":[{\"token\":\"x\"}]}}"),
                FailureScope.WORKER, "asked with echo and logprobs, it returned log-probabilities for 1 token in the"
                        + " chat shape (logprobs.content), those of the generated text only, not of the prompt;"
                        + " log-likelihood jobs need one log-probability per prompt token, as vLLM returns them");
        assertRefused(String.format(both, "{\"index\":1,\"logprobs\":{\"token_logprobs\":[-1],\"text_offset\":[5]}}"),
                FailureScope.WORKER, "asked with echo and logprobs, it returned log-probabilities for 1 token with"
                        + " none of them in the prompt: the generated text's only, not the prompt's (echo ignored);"
                        + " log-likelihood jobs need one log-probability per prompt token, as vLLM returns them");
        assertRefused(String.format(both, choice(1, "-1", "-1").replace("[null,-1.5", "[-9,-1.5")),
                FailureScope.WORKER, "asked with echo and logprobs, its first prompt token has a log-probability,"
                        + " where it can have none (nothing precedes it); log-likelihood jobs need one log-probability"
                        + " per prompt token, as vLLM returns them");
        assertRefused(String.format(both, choice(1, "null", "-1")), FailureScope.WORKER,
                "asked with echo and logprobs, prompt token 2 has no log-probability; log-likelihood jobs need one"
                        + " log-probability per prompt token, as vLLM returns them");
    }

    @Test
    void aContinuationOnThePromptsFirstTokenIsTheJobsFault() {
        LoglikelihoodRequest empty = new LoglikelihoodRequest("", new Choices(List.of("a b x"), ""), SpecParams.NONE);
        assertThatThrownBy(() -> codec.parseLoglikelihoods(answer("{\"choices\":[" + choice(0, "-1", "-1") + "]}"),
                empty))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class,
                        e -> assertThat(e.scope()).isEqualTo(FailureScope.JOB))
                .hasMessage("choice 0's continuation starts at the prompt's first token, which has no"
                        + " log-probability: the vignette's prompt is empty");
    }

    @Test
    void theCapabilityCheckNamesTheShortfall() throws Exception {
        assertThat(codec.probeVerdict(answer("{\"choices\":[{\"logprobs\":null}]}")).text())
                .isEqualTo("it returned no log-probabilities at all");
        int n = TextCompletions.PROBE_PROMPT.length();
        assertThat(codec.probeVerdict(answer("{\"choices\":[{\"logprobs\":{\"token_logprobs\":[null,-1,-2],"
                + "\"text_offset\":[0,8," + n + "]}}]}")).text()).isEmpty();
    }

    private void assertRefused(String body, FailureScope scope, String message) {
        assertThatThrownBy(() -> scores(body))
                .isInstanceOfSatisfying(ChatCompletions.BadResponse.class, e -> assertThat(e.scope()).isEqualTo(scope))
                .hasMessage(message);
    }
}
