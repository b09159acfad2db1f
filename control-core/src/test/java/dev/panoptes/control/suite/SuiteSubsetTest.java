package dev.panoptes.control.suite;

import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Vignette;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SuiteSubsetTest {
    private static final SpecParams PARAMS = new SpecParams("be terse", 0.0, 64, 42L);
    private final Suite suite = suite(10);

    private static Suite suite(int size) {
        List<Vignette> vignettes = new ArrayList<>();
        List<Integer> lines = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            vignettes.add(new Vignette("q" + i, "prompt " + i));
            lines.add(i + 1);
        }
        return new Suite("math", vignettes, "ab".repeat(32), lines);
    }

    private static List<String> ids(Suite s) {
        return s.vignettes().stream().map(Vignette::id).toList();
    }

    private static RunManifest manifest(Suite whole, SuiteSubset subset) {
        return RunManifest.of("dev", "math.jsonl", subset.apply(whole), List.of("m"), PARAMS, 1, null, null, 8, "",
                subset);
    }

    @Test
    void aLimitTakesTheFirstVignettesInSuiteOrderWithTheirLines() {
        Suite first = SuiteSubset.first(3).apply(suite);

        assertThat(ids(first)).containsExactly("q0", "q1", "q2");
        assertThat(first.lines()).containsExactly(1, 2, 3);
        assertThat(first.sha256()).isEqualTo(suite.sha256());
        assertThat(ids(SuiteSubset.first(50).apply(suite))).hasSize(10);
    }

    @Test
    void sampleIdsPickThoseVignettesInSuiteOrderWhateverTheirOrderOnTheCommandLine() {
        Suite picked = SuiteSubset.ofIds(List.of("q7", "q2", "q7", "q4")).apply(suite);

        assertThat(ids(picked)).containsExactly("q2", "q4", "q7");
        assertThat(picked.lines()).containsExactly(3, 5, 8);
        assertThat(SuiteSubset.ofIds(List.of("q7", "q2"))).isEqualTo(SuiteSubset.ofIds(List.of("q2", "q7")));
    }

    @Test
    void unknownSampleIdsAreRefusedNamingEveryOne() {
        SuiteSubset subset = SuiteSubset.ofIds(List.of("q1", "nope", "q99"));

        assertThatThrownBy(() -> subset.apply(suite)).isInstanceOf(SuiteSubset.UnknownIdsException.class)
                .hasMessage("suite math has no vignette with the ids nope, q99")
                .satisfies(e -> assertThat(((SuiteSubset.UnknownIdsException) e).unknown())
                        .containsExactly("nope", "q99"));
    }

    @Test
    void aShuffleIsTheSameOrderForTheSameSeedAndIndependentOfTheFilesOrder() {
        List<String> once = ids(SuiteSubset.ALL.shuffled(7).apply(suite));
        List<Vignette> reversed = new ArrayList<>(suite.vignettes());
        Collections.reverse(reversed);
        Suite backwards = new Suite("math", reversed, suite.sha256());

        assertThat(ids(SuiteSubset.ALL.shuffled(7).apply(suite))).isEqualTo(once);
        assertThat(ids(SuiteSubset.ALL.shuffled(7).apply(backwards))).isEqualTo(once);
        assertThat(once).containsExactlyInAnyOrderElementsOf(ids(suite)).isNotEqualTo(ids(suite));
        assertThat(ids(SuiteSubset.ALL.shuffled(8).apply(suite))).isNotEqualTo(once);
        // Pinned: the order is SHA-256 of "seed\nid", the same on every machine and JVM.
        assertThat(once).containsExactly("q6", "q1", "q8", "q7", "q5", "q4", "q0", "q2", "q3", "q9");
        assertThat(ids(SuiteSubset.first(3).shuffled(7).apply(suite))).isEqualTo(once.subList(0, 3));
    }

    @Test
    void aLimitBelowOneOrABlankIdIsRefused() {
        assertThatThrownBy(() -> SuiteSubset.first(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1, got 0");
        assertThatThrownBy(() -> SuiteSubset.ofIds(List.of(" "))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be empty");
    }

    @Test
    void theWholeSuitesRunIdIsUnchangedAndASubsetMakesAnotherStableOne() {
        RunManifest whole = RunManifest.of("dev", "math.jsonl", suite, List.of("m"), PARAMS, 1, null, null, 8, "");
        RunManifest limited = manifest(suite, SuiteSubset.first(3));

        assertThat(manifest(suite, SuiteSubset.ALL).runId()).isEqualTo(whole.runId())
                .isEqualTo(RunManifest.runId(suite.sha256(), List.of("m"), PARAMS, 1, null, 8, ""));
        assertThat(manifest(suite, SuiteSubset.ALL).subset()).isNull();
        assertThat(limited.runId()).isNotEqualTo(whole.runId()).isEqualTo(manifest(suite, SuiteSubset.first(3)).runId());
        List<String> distinct = List.of(whole.runId(), limited.runId(),
                manifest(suite, SuiteSubset.first(4)).runId(),
                manifest(suite, SuiteSubset.first(3).shuffled(1)).runId(),
                manifest(suite, SuiteSubset.first(3).shuffled(2)).runId(),
                manifest(suite, SuiteSubset.ofIds(List.of("q1", "q2"))).runId(),
                manifest(suite, SuiteSubset.ofIds(List.of("q1", "q3"))).runId());
        assertThat(distinct).doesNotHaveDuplicates();
        assertThat(manifest(suite, SuiteSubset.ofIds(List.of("q2", "q1"))).runId())
                .isEqualTo(manifest(suite, SuiteSubset.ofIds(List.of("q1", "q2"))).runId());
        assertThat(whole.identityDifferences(limited)).containsExactly("subset (none) -> first 3");
        assertThat(limited.vignettes()).isEqualTo(3);
    }

    @Test
    void aManifestKeepsItsSubsetThroughJsonAndOmitsItWithout() {
        RunManifest limited = manifest(suite, SuiteSubset.ofIds(List.of("q1", "q2")).shuffled(5).limited(1));
        RunManifest whole = manifest(suite, SuiteSubset.ALL);

        assertThat(RunManifest.fromJson(limited.toJson())).isEqualTo(limited);
        assertThat(limited.toJson()).contains("\"subset\"").contains("\"shuffleSeed\" : 5");
        assertThat(whole.toJson()).doesNotContain("subset");
        assertThat(RunManifest.fromJson(whole.toJson())).isEqualTo(whole);
    }

    @Test
    void aPlanOverASubsetAsksItsVignettesInItsOrderUnderTheManifestsId() {
        SuiteSubset subset = SuiteSubset.first(4).shuffled(7);
        JobPlan plan = JobPlan.of(suite, subset, PARAMS, 2, "", List.of("m"), 1);

        assertThat(plan.runId()).isEqualTo(RunManifest.runId(suite.sha256(), List.of("m"), PARAMS, 1, null, 2, "",
                subset));
        assertThat(plan.jobs()).flatExtracting(j -> j.spec().vignettes()).extracting(Vignette::id)
                .containsExactlyElementsOf(ids(subset.apply(suite)));
        assertThat(plan.runId()).isNotEqualTo(JobPlan.of(suite, PARAMS, 2, "", List.of("m"), 1).runId());
    }
}
