package dev.panoptes.control.suite;

import dev.panoptes.control.Job;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JobPlanTest {
    private static final String LLAMA = "meta-llama/Llama-3.1-8B";
    private static final SpecParams PARAMS = new SpecParams("be terse", 0.2, 64, 42L);
    private final Suite suite = suite(5);

    private static Suite suite(int size) {
        List<Vignette> vignettes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            vignettes.add(new Vignette("v" + i, "prompt " + i));
        }
        return new Suite("s", vignettes, "ab".repeat(32));
    }

    @Test
    void aRunThatNamesNoModelHasTheManifestsRunIdAndItsOldJobIdForm() {
        JobPlan plan = JobPlan.of(suite, PARAMS, 2, "take 1");

        assertThat(plan.runId()).isEqualTo(RunManifest.runId(suite.sha256(), List.of(), PARAMS, 1, null, 2, "take 1"))
                .hasSize(16);
        assertThat(plan.jobs()).extracting(j -> j.id().value())
                .containsExactly(plan.runId() + "-0000", plan.runId() + "-0001", plan.runId() + "-0002");
    }

    @Test
    void aPlanFromAManifestIsTheSixArgumentPlanUnderTheManifestsId() {
        RunManifest manifest = RunManifest.of("dev", "s.jsonl", suite, List.of("b", LLAMA), PARAMS, 3, "shots.jsonl",
                "cd".repeat(32), 2, "l");
        JobPlan plan = JobPlan.of(suite, manifest);

        assertThat(plan.runId()).isEqualTo(manifest.runId());
        assertThat(plan.jobs()).hasSize(3 * 2 * 3);
        assertThat(plan.jobs()).allSatisfy(j -> assertThat(j.id().value()).startsWith(manifest.runId() + "-"));
        assertThat(plan.jobs().get(0).spec().params()).isEqualTo(PARAMS.withModel("b"));
        assertThatThrownBy(() -> JobPlan.of(new Suite("s", suite(4).vignettes(), "ef".repeat(32)), manifest)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sha256");
    }

    @Test
    void theFourArgumentFormIsTheSixArgumentFormWithNoModelAndOneEpoch() {
        JobPlan legacy = JobPlan.of(suite, PARAMS, 2, "x");
        JobPlan explicit = JobPlan.of(suite, PARAMS, 2, "x", Collections.singletonList(null), 1);

        assertThat(explicit).isEqualTo(legacy);
        assertThat(legacy.jobs()).allSatisfy(j -> {
            assertThat(j.runId()).isEqualTo(legacy.runId());
            assertThat(j.epoch()).isZero();
            assertThat(j.model()).isNull();
            assertThat(j.spec().params()).isEqualTo(PARAMS);
        });
        assertThat(legacy.jobs()).extracting(Job::size).containsExactly(2, 2, 1);
        assertThat(legacy.vignetteCount()).isEqualTo(5);
    }

    @Test
    void aRunOfModelsAndEpochsIsTheSuiteTimesEachModelTimesEachEpochInThatOrder() {
        JobPlan plan = JobPlan.of(suite, PARAMS, 2, "", List.of(LLAMA, "gpt-4o"), 2);
        String llama = JobPlan.modelKey(LLAMA);
        String r = plan.runId();

        assertThat(plan.jobs()).extracting(j -> j.id().value()).containsExactly(
                r + "-" + llama + "-e0-0000", r + "-" + llama + "-e0-0001", r + "-" + llama + "-e0-0002",
                r + "-" + llama + "-e1-0000", r + "-" + llama + "-e1-0001", r + "-" + llama + "-e1-0002",
                r + "-gpt-4o-e0-0000", r + "-gpt-4o-e0-0001", r + "-gpt-4o-e0-0002",
                r + "-gpt-4o-e1-0000", r + "-gpt-4o-e1-0001", r + "-gpt-4o-e1-0002");
        assertThat(plan.jobs()).extracting(Job::model).containsExactly(
                LLAMA, LLAMA, LLAMA, LLAMA, LLAMA, LLAMA, "gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o");
        assertThat(plan.jobs()).extracting(Job::epoch).containsExactly(0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1);
        assertThat(plan.jobs()).allSatisfy(j -> assertThat(j.runId()).isEqualTo(r));
        assertThat(plan.vignetteCount()).isEqualTo(20);
    }

    @Test
    void oneNamedModelWithOneEpochStillGetsModelAndEpochInItsIds() {
        JobPlan plan = JobPlan.of(suite, PARAMS, 5, "", List.of("gpt-4o"), 1);
        assertThat(plan.jobs()).singleElement().satisfies(j -> {
            assertThat(j.id().value()).isEqualTo(plan.runId() + "-gpt-4o-e0-0000");
            assertThat(j.model()).isEqualTo("gpt-4o");
            assertThat(j.spec().params().seed()).isEqualTo(42L);
        });
    }

    @Test
    void theRunIdDependsOnTheModelSetAndEpochsButNotOnModelOrderNorTheModelOfTheParams() {
        String base = JobPlan.of(suite, PARAMS, 2, "l", List.of("a", "b"), 1).runId();

        assertThat(JobPlan.of(suite, PARAMS, 2, "l", List.of("b", "a"), 1).runId()).isEqualTo(base);
        assertThat(JobPlan.of(suite, PARAMS.withModel("c"), 2, "l", List.of("a", "b"), 1).runId()).isEqualTo(base);
        assertThat(JobPlan.of(suite, PARAMS, 2, "l", List.of("a"), 1).runId()).isNotEqualTo(base);
        assertThat(JobPlan.of(suite, PARAMS, 2, "l", List.of("a", "b"), 2).runId()).isNotEqualTo(base);
        assertThat(JobPlan.of(suite, PARAMS, 3, "l", List.of("a", "b"), 1).runId()).isNotEqualTo(base);
        assertThat(JobPlan.of(suite, PARAMS, 2, "m", List.of("a", "b"), 1).runId()).isNotEqualTo(base);
        assertThat(JobPlan.of(suite, PARAMS.withSeed(1L), 2, "l", List.of("a", "b"), 1).runId()).isNotEqualTo(base);
    }

    @Test
    void epochZeroKeepsTheRunsSeedOrNoneAndEachLaterEpochGetsItsOwn() {
        JobPlan seeded = JobPlan.of(suite, PARAMS, 5, "", List.of("a"), 3);
        assertThat(seeded.jobs()).extracting(j -> j.spec().params().seed()).containsExactly(42L, 43L, 44L);

        JobPlan unseeded = JobPlan.of(suite, SpecParams.NONE, 5, "", List.of("a"), 3);
        // Epoch 0 is sent as a one-epoch run sends it, so adding epochs reuses its answers.
        assertThat(unseeded.jobs()).extracting(j -> j.spec().params().seed()).containsExactly(null, 1L, 2L);

        assertThat(JobPlan.of(suite, SpecParams.NONE, 5, "", List.of("a"), 1).jobs())
                .extracting(j -> j.spec().params().seed()).containsOnlyNulls();
        assertThat(JobPlan.of(suite, PARAMS, 5, "", List.of("a", "b"), 1).jobs())
                .extracting(j -> j.spec().params().seed()).containsOnly(42L);
        // Everything else of the parameters is carried as given.
        assertThat(seeded.jobs()).allSatisfy(j -> assertThat(j.spec().params().withSeed(42L))
                .isEqualTo(PARAMS.withModel("a")));
    }

    @Test
    void aModelKeyIsSafeForAnIdAndTellsApartNamesThatDifferOnlyInAReplacedCharacter() {
        String llama = JobPlan.modelKey(LLAMA);
        assertThat(llama).doesNotContain("/").startsWith("meta-llama_Llama-3.1-8B~").hasSize(23 + 1 + 8);
        assertThat(llama).matches("[A-Za-z0-9._~-]+");

        assertThat(JobPlan.modelKey("gpt-4o")).isEqualTo("gpt-4o");
        assertThat(JobPlan.modelKey(null)).isEqualTo("any");
        assertThat(JobPlan.modelKey("org/model")).isNotEqualTo(JobPlan.modelKey("org:model"))
                .isNotEqualTo(JobPlan.modelKey("org_model"));
        assertThat(JobPlan.modelKey("org_model")).isEqualTo("org_model");
        assertThat(JobPlan.modelKey(LLAMA)).isEqualTo(llama);
    }

    @Test
    void aLongModelNameIsCutButStillTellsApartNamesSharingTheFirst64Characters() {
        String prefix = "m".repeat(64);
        String a = JobPlan.modelKey(prefix + "a");
        String b = JobPlan.modelKey(prefix + "b");

        assertThat(a).startsWith(prefix + "~").hasSize(64 + 1 + 8);
        assertThat(a).isNotEqualTo(b);
        assertThat(JobPlan.modelKey(prefix)).isEqualTo(prefix);
    }

    @Test
    void duplicateModelsNoModelsAndFewerThanOneEpochOrVignettePerJobAreRejected() {
        assertThatThrownBy(() -> JobPlan.of(suite, PARAMS, 2, "", List.of("a", "b", "a"), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("models must be at least one, each once")
                .hasMessageContaining("[a, b, a]");
        assertThatThrownBy(() -> JobPlan.of(suite, PARAMS, 2, "", Arrays.asList(null, null), 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JobPlan.of(suite, PARAMS, 2, "", List.of(), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("models must be at least one");
        assertThatThrownBy(() -> JobPlan.of(suite, PARAMS, 2, "", List.of("a"), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("epochs must be at least 1, got 0");
        assertThatThrownBy(() -> JobPlan.of(suite, PARAMS, 0, "", List.of("a"), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("job size must be at least 1, got 0");
    }

    @Test
    void theSameInputsGiveTheSameJobs() {
        assertThat(JobPlan.of(suite(5), PARAMS, 2, "", List.of(LLAMA, "b"), 3))
                .isEqualTo(JobPlan.of(suite(5), PARAMS, 2, "", List.of(LLAMA, "b"), 3));
    }

    @Test
    void idsWrittenInPlaceAreThePrefixAndTheZeroPaddedIndexAtEveryWidth() {
        JobPlan.IdWriter ids = JobPlan.IdWriter.of("0123456789abcdef-gpt-4o-e1-", 5);
        for (int i : new int[] {0, 7, 9, 10, 99, 100, 9_999, 10_000, 99_999}) {
            assertThat(ids.id(i)).isEqualTo("0123456789abcdef-gpt-4o-e1-" + JobPlan.zeroPadded(i, 5));
        }
        assertThatThrownBy(() -> ids.id(100_000)).isInstanceOf(IllegalArgumentException.class);
        // A prefix beyond Latin-1 is left to concatenation, which writes it as it is.
        assertThat(JobPlan.IdWriter.of("r\u0100-", 4)).isNull();
    }

    @Test
    void aPlanOfMoreThan10000JobsNumbersThemWithFiveDigitsInSuiteOrder() {
        JobPlan plan = JobPlan.of(suite(10_001), PARAMS, 1, "");
        assertThat(plan.jobs()).hasSize(10_001);
        assertThat(plan.jobs().get(0).id().value()).isEqualTo(plan.runId() + "-00000");
        assertThat(plan.jobs().get(9_999).id().value()).isEqualTo(plan.runId() + "-09999");
        assertThat(plan.jobs().get(10_000).id().value()).isEqualTo(plan.runId() + "-10000");
        assertThat(plan.jobs().get(10_000).spec().vignettes()).extracting(Vignette::id).containsExactly("v10000");
    }

    @Test
    void jobsOfOneVignetteAndOfSeveralHoldTheirSliceOfTheSuiteInOrder() {
        JobPlan ones = JobPlan.of(suite, PARAMS, 1, "");
        assertThat(ones.jobs()).extracting(j -> j.spec().vignettes().get(0).id())
                .containsExactly("v0", "v1", "v2", "v3", "v4");
        assertThat(ones.jobs()).allSatisfy(j -> assertThat(j.spec().vignettes()).hasSize(1));
        JobPlan twos = JobPlan.of(suite, PARAMS, 2, "");
        assertThat(twos.jobs()).extracting(j -> j.spec().vignettes().stream().map(Vignette::id).toList())
                .containsExactly(List.of("v0", "v1"), List.of("v2", "v3"), List.of("v4"));
    }
}
