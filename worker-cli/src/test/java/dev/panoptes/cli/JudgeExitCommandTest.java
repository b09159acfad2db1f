package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A judge whose replies are no verdicts leaves answers ungraded, and the run says so with exit 3,
 * as the README promises, in its summary and its {@code --summary-json}: {@code eval} with a judge
 * the stub model server answers in prose.
 */
class JudgeExitCommandTest {
    private static final String SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize().toString();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ZERO, 4);

    @Test
    void aJudgeThatGradesNothingExits3AndTheSummaryJsonSaysSo() throws Exception {
        Path json = dir.resolve("summary.json");

        EvalRun run = EvalRun.of("eval", "--suite", SUITE, "--model", StubModelServer.MODEL, "--model-api",
                stub.baseUrl().toString(), "--db", dir.resolve("judge.db").toString(), "--scorer",
                "judge:" + StubModelServer.SMALL_MODEL, "--limit", "3", "--summary-json", json.toString());

        assertThat(run.exit()).as(run.console()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);
        assertThat(run.out()).contains("grading:     3 answers left ungraded by the judge").contains("exit 3");
        JsonNode summary = EvalRun.summary(json);
        assertThat(summary.get("exitCode").asInt()).isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);
    }
}
