package dev.panoptes.cli;

import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The response cache and the run's identity follow which model server answers: {@code eval}
 * against two stub model servers sharing one {@code --db}. An answer one server gave never stands
 * for another's unless the user names them the same ({@code --model-id}); two runs against two
 * servers never resume into each other; and the sampling options that change a request
 * ({@code --top-p}, {@code --stop}, {@code --request-field}) change its key, while adding epochs
 * does not re-ask epoch 0.
 */
class ModelSourceCacheCommandTest {
    private static final String SUITE = Path.of("..", "evals", "math.jsonl").toAbsolutePath().normalize().toString();

    @TempDir
    Path dir;

    private StubModelServer a;
    private StubModelServer b;

    @BeforeEach
    void startStubs() throws Exception {
        a = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ZERO, 4);
        b = StubModelServer.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), Duration.ZERO, 4);
    }

    @AfterEach
    void stopStubs() {
        a.close();
        b.close();
    }

    @Test
    void anotherServerIsAskedItselfEvenWhenTheDatabaseHoldsTheFirstServersAnswers() {
        EvalRun first = eval(a, "--run-label", "on-a");
        assertThat(first.exit()).as(first.console()).isZero();
        assertThat(a.requestCount()).isEqualTo(40);

        EvalRun second = eval(b, "--run-label", "on-b");

        assertThat(second.exit()).as(second.console()).isZero();
        assertThat(b.requestCount()).as("server B answers its own run; console:%n%s", second.console())
                .isEqualTo(40);
        assertThat(second.err()).doesNotContain("served from the database");
    }

    @Test
    void twoRunsAgainstTwoServersAreTwoRunsNotOneResumed() {
        EvalRun first = eval(a);
        assertThat(first.exit()).as(first.console()).isZero();

        EvalRun second = eval(b);

        assertThat(second.exit()).as(second.console()).isZero();
        assertThat(b.requestCount()).as("console:%n%s", second.console()).isEqualTo(40);
        assertThat(runId(second)).isNotEqualTo(runId(first));
    }

    @Test
    void aFleetOfIdenticalServersNamedAlikeWithModelIdSharesItsAnswers() {
        EvalRun first = eval(a, "--model-id", "arith-v1", "--run-label", "on-a");
        assertThat(first.exit()).as(first.console()).isZero();

        EvalRun second = eval(b, "--model-id", "arith-v1", "--run-label", "on-b");

        assertThat(second.exit()).as(second.console()).isZero();
        assertThat(b.requestCount()).as("console:%n%s", second.console()).isZero();
        assertThat(second.err()).contains("40 answers served from the database");
    }

    @Test
    void aRequestFieldTopPOrStopMakesAnotherRequestAndAnotherRun() {
        EvalRun plain = eval(a, "--run-label", "plain");
        assertThat(plain.exit()).as(plain.console()).isZero();
        List<String> ids = new ArrayList<>(List.of(runId(plain)));
        long asked = a.requestCount();
        for (String[] option : new String[][] {{"--request-field", "min_p=0.05"}, {"--top-p", "0.9"},
            {"--stop", "\\n\\n"}}) {
            EvalRun other = eval(a, option[0], option[1], "--run-label", "plain");

            assertThat(other.exit()).as(other.console()).isZero();
            assertThat(a.requestCount() - asked).as("%s %s asks again; console:%n%s", option[0], option[1],
                    other.console()).isEqualTo(40);
            asked = a.requestCount();
            assertThat(ids).as("%s %s is another run", option[0], option[1]).doesNotContain(runId(other));
            ids.add(runId(other));
        }
    }

    @Test
    void addingEpochsServesEpochZeroFromTheFirstRunAndAsksOnlyTheNewEpoch() {
        EvalRun one = eval(a, "--epochs", "1");
        assertThat(one.exit()).as(one.console()).isZero();

        EvalRun two = eval(a, "--epochs", "2");

        assertThat(two.exit()).as(two.console()).isZero();
        assertThat(a.requestCount()).as("40 for the first run, 40 for epoch 1; console:%n%s", two.console())
                .isEqualTo(80);
        assertThat(two.err()).contains("40 answers served from the database");
    }

    private EvalRun eval(StubModelServer server, String... more) {
        List<String> args = new ArrayList<>(List.of("eval", "--suite", SUITE, "--model", StubModelServer.MODEL,
                "--model-api", server.baseUrl().toString(), "--db", dir.resolve("shared.db").toString(),
                "--temperature", "0", "--job-size", "4"));
        args.addAll(List.of(more));
        return EvalRun.of(args.toArray(String[]::new));
    }

    private static String runId(EvalRun run) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("run id ([0-9a-f]{16})").matcher(run.out() + run.err());
        assertThat(m.find()).as("a run id in:%n%s", run.console()).isTrue();
        return m.group(1);
    }
}
