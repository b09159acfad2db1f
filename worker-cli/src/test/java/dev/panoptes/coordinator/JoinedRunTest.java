package dev.panoptes.coordinator;

import dev.panoptes.control.store.RunEntry;
import dev.panoptes.control.suite.RunManifest;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The one line a coordinator prints about the run it joins, from what the database noted before. */
class JoinedRunTest {
    private static final String SHA = "ab".repeat(32);

    private static RunManifest manifest(String suite, String sha, List<String> models, int epochs, String label) {
        return new RunManifest(RunManifest.FORMAT, "dev", suite, sha, 40, models, null, null, null, null, epochs,
                null, null, 8, label);
    }

    private static RunEntry noted(RunManifest m) {
        return RunEntry.of(m, "exact", Instant.EPOCH);
    }

    @Test
    void theSameIdentityResumesSayingHowMuchIsStored() {
        RunManifest m = manifest("evals/math.jsonl", SHA, List.of("a"), 1, "");
        RunManifest sameElsewhere = manifest("/copy/of/math.jsonl", SHA, List.of("a"), 1, "");

        assertThat(JoinedRun.describe(List.of(noted(m)), sameElsewhere, 25, 40))
                .isEqualTo("resuming run " + m.runId() + ": 25 of 40 answers stored");
    }

    @Test
    void anotherIdentityIsANewRunNamingEachRunOfTheSameSuiteAndWhatDiffers() {
        RunManifest now = manifest("evals/math.jsonl", SHA, List.of("small"), 3, "");
        RunManifest otherModel = manifest("evals/math.jsonl", SHA, List.of("big"), 3, "");
        RunManifest otherEpochs = manifest("renamed.jsonl", SHA, List.of("small"), 1, "");
        RunManifest editedSuite = manifest("evals/math.jsonl", "cd".repeat(32), List.of("small"), 3, "");
        RunManifest otherSuite = manifest("evals/geo.jsonl", "ef".repeat(32), List.of("small"), 3, "");

        String line = JoinedRun.describe(List.of(noted(otherModel), noted(otherEpochs), noted(editedSuite),
                noted(otherSuite)), now, 0, 120);

        assertThat(line).startsWith("new run " + now.runId() + ": ")
                .contains("run " + otherModel.runId() + " of this suite differs in models [big] -> [small]")
                .contains("run " + otherEpochs.runId() + " of this suite differs in epochs 1 -> 3")
                .contains("run " + editedSuite.runId() + " of this suite differs in suite content (sha256 cdcdcdcdcdcd..."
                        + " -> abababababab...)")
                .doesNotContain(otherSuite.runId()).doesNotContain("\n");
        assertThat(JoinedRun.describe(List.of(noted(otherSuite)), now, 0, 120)).isEqualTo("new run " + now.runId());
    }

    @Test
    void aLegacyRunOfTheSuiteIsNamedWithWhatItAskedAndManyRunsAreCounted() {
        RunManifest now = manifest("evals/math.jsonl", SHA, List.of("a"), 1, "");
        RunEntry legacy = new RunEntry("e59662dae82fbe62", "evals/math.jsonl", List.of("a", "b"), "numeric", 1, 40,
                Instant.EPOCH);
        List<RunEntry> many = List.of(legacy, noted(manifest("evals/math.jsonl", SHA, List.of("b"), 1, "")),
                noted(manifest("evals/math.jsonl", SHA, List.of("c"), 1, "")),
                noted(manifest("evals/math.jsonl", SHA, List.of("d"), 1, "")),
                noted(manifest("evals/math.jsonl", SHA, List.of("e"), 1, "")));

        String line = JoinedRun.describe(many, now, 0, 40);

        assertThat(line).contains("run e59662dae82fbe62 of this suite was planned by an older Panoptes, whose run ids"
                        + " covered neither models nor epochs (it asked [a, b], 1 epoch)")
                .endsWith("; and 2 more runs of this suite");
    }
}
