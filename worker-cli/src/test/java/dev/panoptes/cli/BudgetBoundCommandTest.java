package dev.panoptes.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --max-cost} bounds what a run can spend, however many requests are in flight: {@code eval}
 * against the stub model server with the whole suite able to be in flight at once, the exit code
 * and the summary JSON's spend.
 */
class BudgetBoundCommandTest {
    private static final String SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize().toString();

    @TempDir
    Path dir;

    @RegisterExtension
    final StubModelApi stub = new StubModelApi(Duration.ofMillis(5), 8);

    @Test
    void aBudgetSmallerThanOneJobsWorstCaseSendsNothingAndExits7() throws Exception {
        Path json = dir.resolve("summary.json");

        EvalRun run = eval("--price", StubModelServer.MODEL + "=1000/1000", "--max-cost", "0.02", "--job-size", "2",
                "--summary-json", json.toString());

        assertThat(run.exit()).as(run.console()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        JsonNode summary = EvalRun.summary(json);
        assertThat(summary.get("budget").get("spentUsd").asDouble()).isLessThanOrEqualTo(0.02);
        assertThat(summary.get("exitCode").asInt()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        assertThat(stub.requestCount()).as("nothing fits the budget").isZero();
        assertThat(run.out()).contains("budget:      the run stopped")
                .contains("the next job's worst case").contains("did not fit in what was left");
    }

    @Test
    void withManyRequestsInFlightTheSpendStaysWithinTheBudgetAndTheRunExits7() throws Exception {
        // The suite's answers cost about 0.44 USD at these prices: 0.2 stops it part way.
        Path json = dir.resolve("summary.json");

        EvalRun run = eval("--price", StubModelServer.MODEL + "=1000/1000", "--max-cost", "0.2", "--job-size", "2",
                "--max-tokens", "4", "--requests", "64", "--summary-json", json.toString());

        assertThat(run.exit()).as(run.console()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        double spent = EvalRun.summary(json).get("budget").get("spentUsd").asDouble();
        assertThat(spent).as(run.console()).isGreaterThan(0).isLessThanOrEqualTo(0.2);
        assertThat(stub.requestCount()).isBetween(1L, 39L);
    }

    @Test
    void withoutMaxTokensTheLongestAnswerSeenBoundsTheNextJobsAndNoOverspendExits0() throws Exception {
        Path json = dir.resolve("summary.json");

        EvalRun run = eval("--price", StubModelServer.MODEL + "=1000/1000", "--max-cost", "0.2", "--job-size", "2",
                "--requests", "64", "--summary-json", json.toString());

        JsonNode summary = EvalRun.summary(json);
        double spent = summary.get("budget").get("spentUsd").asDouble();
        assertThat(run.exit()).as(run.console()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        assertThat(summary.get("exitCode").asInt()).isEqualTo(CoordinatorRun.EXIT_BUDGET);
        if (spent > 0.2) {
            assertThat(run.out()).contains("budget:      EXCEEDED");
        }
    }

    @Test
    void aBudgetLargeEnoughForTheWholeSuiteCompletesWithExit0() throws Exception {
        Path json = dir.resolve("summary.json");

        EvalRun run = eval("--price", StubModelServer.MODEL + "=1000/1000", "--max-cost", "100", "--job-size", "2",
                "--max-tokens", "4", "--summary-json", json.toString());

        assertThat(run.exit()).as(run.console()).isZero();
        assertThat(stub.requestCount()).isEqualTo(40);
        assertThat(EvalRun.summary(json).get("budget").get("spentUsd").asDouble()).isLessThanOrEqualTo(100);
    }

    private EvalRun eval(String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", SUITE, "--model", StubModelServer.MODEL,
                "--model-api", stub.baseUrl().toString(), "--db", dir.resolve("budget.db").toString()));
        args.addAll(List.of(more));
        return EvalRun.of(args.toArray(String[]::new));
    }
}
