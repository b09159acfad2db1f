package dev.panoptes.demo;

import dev.panoptes.control.Choices;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.WorkerFaultException;
import dev.panoptes.control.score.ChoiceLoglikelihoods;
import dev.panoptes.eval.LoglikelihoodRequest;
import dev.panoptes.eval.ModelResponse;
import dev.panoptes.eval.http.HttpModelClient;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The worker's model client asking log-likelihoods of the stub, as it would of vLLM or of llama.cpp's server. */
class LoglikelihoodClientTest {
    private static final Vignette QUESTION = Vignette.multipleChoice("q", "Question: What is 17 + 25?\nAnswer:",
            new Choices(List.of("41", "42", "Forty-two point zero")), 1, Map.of());

    @Test
    void sumsEachContinuationsTokenLogprobsInOneRequestAndSaysWhichWereGreedy() throws Exception {
        try (StubModelServer stub = start();
             HttpModelClient client = HttpModelClient.builder(stub.baseUrl(), "stub-arithmetic").build()) {
            ModelResponse r = client.loglikelihoodAsync(LoglikelihoodRequest.of(QUESTION, SpecParams.NONE)).join();

            ChoiceLoglikelihoods lls = ChoiceLoglikelihoods.parse(r.text());
            assertThat(lls.loglikelihoods()).hasSize(3);
            assertThat(lls.chosen()).isEqualTo(1);
            assertThat(lls.loglikelihoods().get(1)).isEqualTo(-0.05);
            assertThat(lls.greedy()).containsExactly(false, true, false);
            // The longer third choice sums more tokens: lower in total than the short wrong one.
            assertThat(lls.chars()).containsExactly(2, 2, 20);
            // The capability check, then one request for all three choices.
            assertThat(stub.requestCount()).isEqualTo(2);
            client.loglikelihoodAsync(LoglikelihoodRequest.of(QUESTION, SpecParams.NONE)).join();
            assertThat(stub.requestCount()).as("the check is made once").isEqualTo(3);
        }
    }

    @Test
    void aTokenSpanningTheBoundaryCountsInTheContinuation() throws Exception {
        // "Answer: " + "42": the stub's tokenizer makes " 42" one token, starting in the context.
        Vignette spaced = Vignette.multipleChoice("s", "Question: What is 17 + 25?\nAnswer: ",
                new Choices(List.of("41", "42"), ""), 1, Map.of());
        try (StubModelServer stub = start();
             HttpModelClient client = HttpModelClient.builder(stub.baseUrl(), "stub-arithmetic").build()) {
            ChoiceLoglikelihoods lls = ChoiceLoglikelihoods.parse(client.loglikelihoodAsync(
                    LoglikelihoodRequest.of(spaced, SpecParams.NONE)).join().text());
            assertThat(lls.loglikelihoods().get(1)).isEqualTo(-0.05);
            assertThat(lls.chosen()).isEqualTo(1);
        }
    }

    @Test
    void aServerWithoutPromptLogprobsIsRefusedAsTheWorkersFaultNamingTheShortfallAndWhatServesIt() throws Exception {
        try (StubModelServer stub = start();
             HttpModelClient client = HttpModelClient.builder(stub.baseUrl(), "stub-arithmetic").build()) {
            stub.servePromptLogprobs(false);
            assertThatThrownBy(() -> client.loglikelihoodAsync(LoglikelihoodRequest.of(QUESTION, SpecParams.NONE))
                    .join())
                    .isInstanceOf(CompletionException.class)
                    .cause().isInstanceOf(WorkerFaultException.class)
                    .hasMessageContaining("does not return prompt log-probabilities")
                    .hasMessageContaining("the generated text only")
                    .hasMessageContaining("llama.cpp #27174")
                    .hasMessageContaining("vLLM");
            assertThat(stub.requestCount()).as("only the check was sent").isEqualTo(1);
            assertThatThrownBy(() -> client.loglikelihoodAsync(LoglikelihoodRequest.of(QUESTION, SpecParams.NONE))
                    .join()).cause().isInstanceOf(WorkerFaultException.class);
            assertThat(stub.requestCount()).as("the verdict is kept").isEqualTo(1);
        }
    }

    private static StubModelServer start() throws Exception {
        return StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ZERO, 4);
    }
}
