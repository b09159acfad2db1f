package dev.panoptes.control.suite;

import dev.panoptes.control.SpecParams;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RunManifestTest {
    private static final RunManifest BASE = new RunManifest(RunManifest.FORMAT, "1.0.0", "evals/math.jsonl",
            "ab".repeat(32), 40, List.of("stub-arithmetic", "stub-b"), "Answer with a number.", 0.2, 64, 42L, 1,
            "shots.jsonl", "cd".repeat(32), 8, "");

    private static RunManifest with(UnaryOperator<Fields> change) {
        return change.apply(new Fields(BASE)).build();
    }

    /** A mutable copy of a manifest's fields, to change one at a time. */
    private static final class Fields {
        int format;
        String toolVersion;
        String suite;
        String suiteSha256;
        int vignettes;
        List<String> models;
        String systemPrompt;
        Double temperature;
        Integer maxTokens;
        Long seed;
        int epochs;
        String fewShot;
        String fewShotSha256;
        int jobSize;
        String label;

        Fields(RunManifest m) {
            format = m.format();
            toolVersion = m.toolVersion();
            suite = m.suite();
            suiteSha256 = m.suiteSha256();
            vignettes = m.vignettes();
            models = m.models();
            systemPrompt = m.systemPrompt();
            temperature = m.temperature();
            maxTokens = m.maxTokens();
            seed = m.seed();
            epochs = m.epochs();
            fewShot = m.fewShot();
            fewShotSha256 = m.fewShotSha256();
            jobSize = m.jobSize();
            label = m.label();
        }

        RunManifest build() {
            return new RunManifest(format, toolVersion, suite, suiteSha256, vignettes, models, systemPrompt,
                    temperature, maxTokens, seed, epochs, fewShot, fewShotSha256, jobSize, label);
        }
    }

    @Test
    void theRunIdChangesWithEachIdentityField() {
        List<RunManifest> changed = List.of(
                with(f -> { f.suiteSha256 = "ef".repeat(32); return f; }),
                with(f -> { f.models = List.of("stub-arithmetic-small", "stub-b"); return f; }),
                with(f -> { f.models = List.of("stub-arithmetic"); return f; }),
                with(f -> { f.systemPrompt = "Answer in words."; return f; }),
                with(f -> { f.systemPrompt = null; return f; }),
                with(f -> { f.temperature = 0.7; return f; }),
                with(f -> { f.maxTokens = 65; return f; }),
                with(f -> { f.seed = 43L; return f; }),
                with(f -> { f.epochs = 2; return f; }),
                with(f -> { f.fewShotSha256 = null; return f; }),
                with(f -> { f.fewShotSha256 = "00".repeat(32); return f; }),
                with(f -> { f.jobSize = 9; return f; }),
                with(f -> { f.label = "again"; return f; }));
        List<String> ids = new ArrayList<>();
        ids.add(BASE.runId());
        for (RunManifest m : changed) {
            ids.add(m.runId());
            assertThat(BASE.identityDifferences(m)).as("what differs from %s", m).hasSize(1);
        }
        assertThat(ids).doesNotHaveDuplicates().allSatisfy(id -> assertThat(id).matches("[0-9a-f]{16}"));
    }

    @Test
    void theRunIdIgnoresPathsToolVersionCountsAndModelOrder() {
        List<RunManifest> same = List.of(
                with(f -> { f.suite = "/elsewhere/math-copy.jsonl"; return f; }),
                with(f -> { f.fewShot = "other-name.jsonl"; return f; }),
                with(f -> { f.toolVersion = "2.0.0"; return f; }),
                with(f -> { f.vignettes = 41; return f; }),
                with(f -> { f.format = 2; return f; }),
                with(f -> { f.models = List.of("stub-b", "stub-arithmetic"); return f; }));
        for (RunManifest m : same) {
            assertThat(m.runId()).as("%s", m).isEqualTo(BASE.runId());
            assertThat(BASE.identityDifferences(m)).isEmpty();
        }
    }

    @Test
    void theRunIdIsTheStaticFormOverTheIdentityFields() {
        assertThat(BASE.runId()).isEqualTo(RunManifest.runId("ab".repeat(32), List.of("stub-b", "stub-arithmetic"),
                new SpecParams("Answer with a number.", 0.2, 64, 42L, "ignored-model"), 1, "cd".repeat(32), 8, ""));
        // A run that names no model: an empty set and a single null are the same.
        assertThat(RunManifest.runId("ab".repeat(32), java.util.Collections.singletonList(null), SpecParams.NONE, 1,
                null, 8, "")).isEqualTo(RunManifest.runId("ab".repeat(32), List.of(), SpecParams.NONE, 1, null, 8, ""));
    }

    @Test
    void differencesSayWhatChangedFromWhatToWhat() {
        RunManifest small = with(f -> { f.models = List.of("stub-arithmetic-small"); f.epochs = 3; return f; });
        assertThat(with(f -> { f.models = List.of("stub-arithmetic"); return f; }).identityDifferences(small))
                .containsExactly("models [stub-arithmetic] -> [stub-arithmetic-small]", "epochs 1 -> 3");
        assertThat(BASE.identityDifferences(with(f -> { f.temperature = null; return f; })))
                .containsExactly("temperature 0.2 -> (none)");
    }

    @Test
    void theJsonIsReadableInAFixedOrderAndRoundTrips() {
        String json = BASE.toJson();

        assertThat(json).contains("\n").contains("\"runId\" : \"" + BASE.runId() + "\"");
        List<String> order = List.of("\"format\"", "\"runId\"", "\"toolVersion\"", "\"suite\"", "\"suiteSha256\"",
                "\"vignettes\"", "\"models\"", "\"systemPrompt\"", "\"temperature\"", "\"maxTokens\"", "\"seed\"",
                "\"epochs\"", "\"fewShot\"", "\"fewShotSha256\"", "\"jobSize\"", "\"label\"");
        int at = -1;
        for (String field : order) {
            int next = json.indexOf(field);
            assertThat(next).as(field + " after the field before it in\n" + json).isGreaterThan(at);
            at = next;
        }
        assertThat(RunManifest.fromJson(json)).isEqualTo(BASE);
        RunManifest bare = new RunManifest(1, "dev", "s.csv", "ab".repeat(32), 1, List.of(), null, null, null, null,
                1, null, null, 1, "");
        assertThat(bare.toJson()).contains("\"systemPrompt\" : null");
        assertThat(RunManifest.fromJson(bare.toJson())).isEqualTo(bare);
        assertThatThrownBy(() -> RunManifest.fromJson("[1, 2]")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("not a run manifest");
    }
}
