package dev.panoptes.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The response cache's line for runs asked by log-likelihood: such a request is sent at
 * temperature 0 whatever the run's temperature, so a multiple-choice task's run is cached (a
 * second run is answered from the database without a model call), and a suite of choices run at
 * another temperature is told what keeps it from the cache, not that its model samples.
 */
class LoglikelihoodCacheTest {
    private static final Path TASK = Path.of("..", "evals", "arithmetic-task.yaml").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(1), 8);

    @Test
    void aMultipleChoiceTasksAnswersAreCachedAndASecondRunAsksNothing() {
        Path db = dir.resolve("t.db");
        EvalRun first = stub.eval("--task", TASK.toString(), "--db", db.toString());
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.err()).doesNotContain("no --temperature")
                .contains("response cache: none of the 40 requests was answered before");

        long before = stub.requestCount();
        EvalRun second = stub.eval("--task", TASK.toString(), "--db", db.toString(), "--run-label", "again");
        assertThat(second.exit()).as(second.err()).isZero();
        assertThat(second.err()).contains("response cache: 40 answers served from the database");
        assertThat(stub.requestCount() - before).as("no log-likelihood request the second time").isLessThanOrEqualTo(1);
    }

    @Test
    void aSuiteOfChoicesAtAnotherTemperatureIsToldTheTemperatureDoesNotChangeItsAnswers() throws Exception {
        Path suite = dir.resolve("mc.jsonl");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            lines.add("{\"id\": \"q" + i + "\", \"prompt\": \"What is " + i + " + 1?\", \"choices\": [\"" + (i + 1)
                    + "\", \"" + (i + 2) + "\"], \"expected\": \"0\"}");
        }
        Files.write(suite, lines);
        EvalRun r = stub.eval("--suite", suite.toString(), "--db", dir.resolve("s.db").toString());

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("the model API's default (1 for OpenAI-compatible APIs) samples")
                .contains("response cache: off: log-likelihood (multiple-choice) answers do not depend on the"
                        + " temperature (they are asked at 0), but the cache keys every request by the run's (none"
                        + " given); run with --temperature 0 to cache them");
    }
}
