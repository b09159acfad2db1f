package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@link RequestKey} covers, and what it leaves out. */
class RequestKeyTest {
    private static final String SOURCE = ModelSource.endpoint(java.net.URI.create("http://a:8000/v1"));
    private static final SpecParams ZERO = new SpecParams("Be brief.", 0.0, 16, 7L).withModelSource(SOURCE);
    private static final List<ChatMessage> TURNS = List.of(ChatMessage.user("2+2?"), ChatMessage.assistant("4"),
            ChatMessage.user("3+3?"));

    @Test
    void theSameRequestHasTheSameKeyWhateverTheVignetteIdExpectedAnswerOrMetadata() {
        Vignette a = new Vignette("q1", "What is 1+1?", "2", Map.of("topic", "sums"));
        Vignette b = new Vignette("other-id", "What is 1+1?", "two", Map.of());
        Job jobA = new Job(JobId.of("run1-m-e0-0000"), new EvalSpec("s", List.of(a), ZERO.withModel("m")), "run1", 0);
        Job jobB = new Job(JobId.of("run2-m-e0-0003"), new EvalSpec("t", List.of(b), ZERO.withModel("m")), "run2", 0);

        assertThat(RequestKey.of(jobA, a)).hasSize(64).isEqualTo(RequestKey.of(jobB, b));
    }

    @Test
    void aMultipleChoiceVignettesKeyCoversItsContinuationsAndNeverEqualsItsPromptsChatKey() {
        Vignette chat = new Vignette("q", "What is 1+1?", null, Map.of());
        Vignette mc = Vignette.multipleChoice("q", "What is 1+1?", new Choices(List.of("2", "3")), 0, Map.of());
        Vignette otherChoices = Vignette.multipleChoice("q", "What is 1+1?", new Choices(List.of("2", "4")), 0,
                Map.of());
        Vignette otherDelimiter = Vignette.multipleChoice("q", "What is 1+1?", new Choices(List.of("2", "3"), "\n"),
                0, Map.of());
        Job job = new Job(JobId.of("run1-m-e0-0000"), new EvalSpec("s", List.of(chat), ZERO.withModel("m")), "run1", 0);

        assertThat(List.of(RequestKey.of(job, mc), RequestKey.of(job, otherChoices), RequestKey.of(job, otherDelimiter),
                RequestKey.of(job, chat))).doesNotHaveDuplicates().allSatisfy(k -> assertThat(k).hasSize(64));
    }

    @Test
    void everyFieldSentToTheModelAndTheEpochChangeTheKey() {
        String base = RequestKey.of("m", ZERO, TURNS, 0);
        assertThat(List.of(
                RequestKey.of("m2", ZERO, TURNS, 0),
                RequestKey.of("m", new SpecParams("Be terse.", 0.0, 16, 7L).withModelSource(SOURCE), TURNS, 0),
                RequestKey.of("m", new SpecParams(null, 0.0, 16, 7L).withModelSource(SOURCE), TURNS, 0),
                RequestKey.of("m", new SpecParams("Be brief.", 0.5, 16, 7L).withModelSource(SOURCE), TURNS, 0),
                RequestKey.of("m", new SpecParams("Be brief.", null, 16, 7L).withModelSource(SOURCE), TURNS, 0),
                RequestKey.of("m", new SpecParams("Be brief.", 0.0, 17, 7L).withModelSource(SOURCE), TURNS, 0),
                RequestKey.of("m", new SpecParams("Be brief.", 0.0, 16, 8L).withModelSource(SOURCE), TURNS, 0),
                RequestKey.of("m", ZERO, TURNS.subList(2, 3), 0),
                RequestKey.of("m", ZERO, List.of(ChatMessage.user("2+2?"), ChatMessage.user("4"),
                        ChatMessage.user("3+3?")), 0),
                RequestKey.of("m", ZERO, TURNS, 1),
                RequestKey.of("m", ZERO.withModelSource(ModelSource.endpoint(java.net.URI.create("http://b:8000/v1"))),
                        TURNS, 0),
                RequestKey.of("m", ZERO.withModelSource(ModelSource.named("fleet-a")), TURNS, 0),
                RequestKey.of("m", ZERO.withSampling(0.9, null, null), TURNS, 0),
                RequestKey.of("m", ZERO.withSampling(null, List.of("\n"), null), TURNS, 0),
                RequestKey.of("m", ZERO.withSampling(null, null, ExtraBody.of(List.of("min_p=0.05"))), TURNS, 0)))
                .doesNotContain(base).doesNotHaveDuplicates();
    }

    @Test
    void noValueCanPassForAnotherField() {
        // A system prompt that spells the next line of the key is quoted, so it stays a system prompt.
        String sneaky = RequestKey.of("m", new SpecParams("x\"\nmessage \"user\" \"hi", null, null, null).withModelSource(SOURCE),
                List.of(ChatMessage.user("q")), 0);
        String plain = RequestKey.of("m", new SpecParams("x", null, null, null).withModelSource(SOURCE),
                List.of(ChatMessage.user("hi"), ChatMessage.user("q")), 0);
        assertThat(sneaky).isNotEqualTo(plain);
    }

    @Test
    void onlyARequestAtTemperatureZeroKeepsItsKeyInTheStore() {
        Vignette v = new Vignette("q1", "What is 1+1?", "2", Map.of());
        Job zero = new Job(JobId.of("r-m-e0-0000"), new EvalSpec("s", List.of(v), ZERO.withModel("m")), "r", 0);
        Job sampled = new Job(JobId.of("r-m-e0-0001"), new EvalSpec("s", List.of(v),
                new SpecParams("Be brief.", 0.7, 16, 7L).withModel("m")), "r", 0);
        Job apiDefault = new Job(JobId.of("r-m-e0-0002"), new EvalSpec("s", List.of(v),
                new SpecParams(null, null, null, null).withModel("m")), "r", 0);

        assertThat(RequestKey.stored(zero, v)).isEqualTo(RequestKey.of(zero, v)).hasSize(64);
        assertThat(RequestKey.stored(sampled, v)).as("temperature 0.7 samples: never served").isNull();
        assertThat(RequestKey.stored(apiDefault, v)).as("the API's default temperature samples").isNull();
    }

    @Test
    void aJobThatNamesNoModelHasNoKey() {
        assertThat(RequestKey.of(null, ZERO, TURNS, 0)).isNull();
    }

    @Test
    void aRequestWhoseModelServerIsUnknownHasNoKeySoItIsNeverServedNorServes() {
        assertThat(RequestKey.of("m", ZERO.withModelSource(null), TURNS, 0)).isNull();
        assertThat(RequestKey.cacheable(ZERO.withModelSource(null))).isFalse();
    }

    @Test
    void spellingsOfOneEndpointAgreeAndItsUserInfoIsDropped() {
        assertThat(ModelSource.endpoint(java.net.URI.create("HTTP://User:secret@Host:80/v1/")))
                .isEqualTo(ModelSource.endpoint(java.net.URI.create("http://host/v1")))
                .isEqualTo("endpoint http://host/v1");
    }

    @Test
    void loneSurrogatesAndTheQuestionMarkUTF8WouldTurnThemIntoGiveThreeKeys() {
        List<String> keys = List.of(
                RequestKey.of("m", ZERO, List.of(ChatMessage.user("answer: \ud800")), 0),
                RequestKey.of("m", ZERO, List.of(ChatMessage.user("answer: \udbff")), 0),
                RequestKey.of("m", ZERO, List.of(ChatMessage.user("answer: ?")), 0),
                RequestKey.of("m", ZERO, List.of(ChatMessage.user("answer: \\ud800")), 0));
        assertThat(keys).doesNotHaveDuplicates();
    }
}
