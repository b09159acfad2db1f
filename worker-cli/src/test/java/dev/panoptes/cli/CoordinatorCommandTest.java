package dev.panoptes.cli;

import dev.panoptes.console.Logging;
import dev.panoptes.control.EvalSpec;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobId;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.SpecParams;
import dev.panoptes.control.Usage;
import dev.panoptes.control.Vignette;
import dev.panoptes.control.score.RunScoring;
import dev.panoptes.control.store.JdbcResultStore;
import dev.panoptes.coordinator.CoordinatorRun;
import dev.panoptes.coordinator.CoordinatorSettings;
import dev.panoptes.coordinator.DatabaseLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code worker.jar coordinator ...} and {@code worker.jar results ...} as a user types them. */
class CoordinatorCommandTest {
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @AfterEach
    void restoreLogLevel() {
        Logging.setVerbose(false);
    }

    @Test
    void parsesEveryOption() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        CoordinatorCommand command = new CoordinatorCommand(Map.of());
        new CommandLine(command).parseArgs("--listen", "0.0.0.0:9090", "--suite", suite.toString(), "--model", "m",
                "--db", dir.resolve("x.db").toString(), "--job-size", "16", "--token", "s3cret", "--system", "terse",
                "--temperature", "0.5", "--max-tokens", "64", "--seed", "7", "--run-label", "gpt-4o",
                "--max-attempts", "5", "--wait-for-workers", "30s", "--heartbeat-interval", "2s",
                "--heartbeat-timeout", "7s", "--job-timeout", "90s", "--model", "qwen2.5-7b", "--scorer", "numeric:1%",
                "--epochs", "3", "--group-by", "topic");

        CoordinatorSettings s = command.settings();

        assertThat(s.listen().getHostString()).isEqualTo("0.0.0.0");
        assertThat(s.listen().getPort()).isEqualTo(9090);
        assertThat(s.suite()).isEqualTo(suite);
        assertThat(s.db()).isEqualTo(dir.resolve("x.db"));
        assertThat(s.jobSize()).isEqualTo(16);
        assertThat(s.token()).isEqualTo("s3cret");
        assertThat(s.params()).isEqualTo(new SpecParams("terse", 0.5, 64, 7L));
        assertThat(s.label()).isEqualTo("gpt-4o");
        assertThat(s.maxAttempts()).isEqualTo(5);
        assertThat(s.waitForWorkers()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.heartbeatInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.heartbeatTimeout()).isEqualTo(Duration.ofSeconds(7));
        assertThat(s.jobTimeout()).isEqualTo(Duration.ofSeconds(90));
        assertThat(s.models()).containsExactly("m", "qwen2.5-7b");
        assertThat(s.scorer()).isEqualTo("numeric:1%");
        assertThat(s.epochs()).isEqualTo(3);
        assertThat(s.groupBy()).isEqualTo("topic");
        assertThat(s.toString()).doesNotContain("s3cret");
    }

    @Test
    void theTokenFallsBackToTheEnvironmentAndDefaultsFollowTheProtocol() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        CoordinatorCommand command = new CoordinatorCommand(Map.of(WorkerMain.TOKEN_ENV, "from-env"));
        new CommandLine(command).parseArgs("--suite", suite.toString(), "--model", "m");

        CoordinatorSettings s = command.settings();

        assertThat(s.token()).isEqualTo("from-env");
        assertThat(s.listen().getPort()).isEqualTo(7070);
        assertThat(s.db()).isEqualTo(Path.of("panoptes.db"));
        assertThat(s.jobSize()).isEqualTo(8);
        assertThat(s.heartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.heartbeatTimeout()).isNull();
        // Eight vignettes called one after another, each within the model client's 5 minute budget.
        assertThat(s.jobTimeout()).isEqualTo(Duration.ofMinutes(40));
        assertThat(s.scorer()).isEqualTo("exact");
        assertThat(s.epochs()).isEqualTo(1);
    }

    @Test
    void aBrokenSuiteIsReportedLineByLineWithExitCode2() throws Exception {
        Path suite = Files.writeString(dir.resolve("bad.jsonl"),
                "{\"id\":\"a\",\"prompt\":\"ok\"}\n{\"id\":\"b\"}\n{oops\n");

        int exit = execute("coordinator", "--suite", suite.toString(), "--model", "m", "--listen", "127.0.0.1:0",
                "--db", dir.resolve("r.db").toString());

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("bad.jsonl has 2 problems:")
                .contains("bad.jsonl:2: vignette has no \"prompt\" field")
                .contains("bad.jsonl:3: not valid JSON")
                .contains("nothing was sent to any worker");
        assertThat(dir.resolve("r.db")).doesNotExist();
    }

    @Test
    void badValuesNameTheOptionAndExitWith2() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        List<List<String>> cases = List.of(
                List.of("--suite", dir.resolve("missing.jsonl").toString(), "--model", "m"),
                List.of("--suite", suite.toString(), "--model", "m", "--epochs", "0"),
                List.of("--suite", suite.toString(), "--model", "m", "--scorer", "fuzzy"),
                List.of("--suite", suite.toString(), "--model", "m", "--scorer", "regex:(unclosed"),
                List.of("--suite", suite.toString(), "--model", "m", "--scorer", "judge"),
                List.of("--suite", suite.toString(), "--model", "m", "--model", "m"),
                List.of("--suite", suite.toString(), "--model", "m", "--few-shot", dir.resolve("none.jsonl").toString()),
                List.of("--suite", suite.toString(), "--model", "m", "--job-size", "0"),
                List.of("--suite", suite.toString(), "--model", "m", "--max-attempts", "0"),
                List.of("--suite", suite.toString(), "--model", "m", "--temperature", "3"),
                List.of("--suite", suite.toString(), "--model", "m", "--listen", "nowhere"),
                List.of("--suite", suite.toString(), "--model", "m", "--heartbeat-interval", "5s", "--heartbeat-timeout", "5s"),
                List.of("--suite", suite.toString(), "--model", "m", "--db", dir.resolve("no/such/dir/r.db").toString()),
                List.of("--suite", suite.toString(), "--model", "m", "--job-timeout", "0s"));
        List<String> options = List.of("--suite", "--epochs", "--scorer", "--scorer", "--scorer", "--model",
                "--few-shot", "--job-size", "--max-attempts", "--temperature", "--listen",
                "--heartbeat-timeout", "--db", "--job-timeout");
        for (int i = 0; i < cases.size(); i++) {
            StringWriter caseErr = new StringWriter();
            String[] args = java.util.stream.Stream.concat(java.util.stream.Stream.of("coordinator"),
                    cases.get(i).stream()).toArray(String[]::new);
            int exit = WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(caseErr, true), Map.of());
            assertThat(exit).as("%s", cases.get(i)).isEqualTo(2);
            assertThat(caseErr.toString()).as("%s", cases.get(i)).contains("'" + options.get(i) + "'")
                    .doesNotContain("Exception");
        }
    }

    @Test
    void aBadMaxErrorRateOrFrameLimitIsRefusedSayingWhatIsWantedBeforeAnythingIsOpened() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        Path db = dir.resolve("r.db");
        List<String> base = List.of("coordinator", "--suite", suite.toString(), "--model", "m", "--db", db.toString(),
                "--listen", "127.0.0.1:0", "--wait-for-workers", "1ms");

        assertThat(execute(with(base, "--max-error-rate", "abc"))).isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--max-error-rate': must be a share from 0 to 1"
                + " (such as 0.05) or a percentage (5%), got 'abc'").doesNotContain("double");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--max-error-rate", "2"))).isEqualTo(2);
        assertThat(err.toString()).contains("'--max-error-rate': must be from 0 to 1 (a share of the answers stored),"
                + " got 2");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--max-frame-bytes", "1000"))).isEqualTo(2);
        assertThat(err.toString()).contains("'--max-frame-bytes': must be at least 65536 (64 KiB), got 1000");
        assertThat(db).as("refused before anything is opened").doesNotExist();
    }

    @Test
    void withoutATokenTheAdminEndpointStaysOnLoopbackUnlessToldOtherwise() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        Path db = dir.resolve("r.db");
        List<String> base = List.of("coordinator", "--suite", suite.toString(), "--model", "m", "--db", db.toString(),
                "--listen", "127.0.0.1:0", "--wait-for-workers", "1ms");

        assertThat(execute(with(base, "--metrics", "0.0.0.0:0"))).isEqualTo(2);
        assertThat(err.toString().lines().findFirst()).hasValue("Invalid value for option '--metrics': an admin"
                + " endpoint on 0.0.0.0:0 would be open to other machines (it is not a loopback address) without"
                + " authentication, since there is no token. Set a token (--token or PANOPTES_TOKEN; scrapers then"
                + " send 'Authorization: Bearer TOKEN'), or serve it on 127.0.0.1, or add --metrics-insecure to serve"
                + " it open anyway");
        assertThat(db).as("refused before anything is opened").doesNotExist();

        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--metrics-insecure"))).isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--metrics-insecure': it loosens --metrics");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--metrics", "127.0.0.1:0", "--metrics-insecure", "--token", "s3cret")))
                .isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--metrics-insecure': there is a token")
                .doesNotContain("s3cret");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--admin-linger", "5s"))).isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--admin-linger': it keeps --metrics up after"
                + " the run, and --metrics is not given");
        err.getBuffer().setLength(0);
        assertThat(execute(with(base, "--metrics", "127.0.0.1:0", "--admin-linger", "-5s"))).isEqualTo(2);
        assertThat(err.toString()).contains("--admin-linger").contains("expected a duration such as");
        assertThat(db).doesNotExist();
    }

    @Test
    void aZeroAdminLingerWithoutMetricsIsANoOpAndTheWaitForWorkersLimitIsPrintedForPeople() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        Path db = dir.resolve("r.db");

        int exit = execute("coordinator", "--suite", suite.toString(), "--model", "m", "--db", db.toString(),
                "--listen", "127.0.0.1:0", "--wait-for-workers", "1s", "--admin-linger", "0", "--no-progress");

        assertThat(exit).as("no worker came: the job fails; the linger is no usage error; stderr:%n%s", err)
                .isEqualTo(CoordinatorRun.EXIT_INCOMPLETE);
        assertThat(err.toString()).doesNotContain("--admin-linger");
        // The waited time and its limit, as a person reads them, not "1003 ms (limit 1000 ms)".
        assertThat(out.toString()).containsPattern("after 0 attempts: no worker connected for 1(\\.\\d)? s"
                + " \\(limit 1 s\\); start workers pointed at the coordinator").doesNotContain(" ms (limit");
    }

    private int execute(List<String> args) {
        return execute(args.toArray(String[]::new));
    }

    private static List<String> with(List<String> base, String... more) {
        List<String> all = new java.util.ArrayList<>(base);
        all.addAll(List.of(more));
        return all;
    }

    @Test
    void anAddressThatDoesNotResolveFailsClearlyAndLeavesNoDatabase() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        Path db = dir.resolve("r.db");

        int exit = execute("coordinator", "--suite", suite.toString(), "--model", "m", "--db", db.toString(),
                "--listen", "no-such-host.invalid:7070");

        assertThat(exit).isEqualTo(1);
        assertThat(err.toString()).contains("cannot listen for workers on no-such-host.invalid:7070")
                .contains("does not resolve").doesNotContain("Exception");
        assertThat(db).doesNotExist();
        DatabaseLock.acquire(db, new InetSocketAddress("127.0.0.1", 7070)).close(); // the failed run let go
    }

    @Test
    void aCoordinatorOnADatabaseInUseSaysByWhomInOneLineBindsNothingAndCreatesNothing() throws Exception {
        Path suite = Files.writeString(dir.resolve("s.jsonl"), "{\"id\":\"a\",\"prompt\":\"p\"}\n");
        Path db = dir.resolve("r.db");
        try (DatabaseLock holder = DatabaseLock.acquire(db, new InetSocketAddress("127.0.0.1", 7070));
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            holder.listening(new InetSocketAddress("127.0.0.1", 7171));

            // Told to listen where something already does: had it tried to bind before checking the
            // lock, it would fail with "address in use" instead.
            int exit = execute("coordinator", "--suite", suite.toString(), "--model", "m", "--db", db.toString(),
                    "--listen", "127.0.0.1:" + taken.getLocalPort());

            assertThat(exit).isEqualTo(1);
            assertThat(err.toString().lines()).containsExactly("worker.jar coordinator: " + db
                    + " is in use by another coordinator (pid " + ProcessHandle.current().pid() + " on "
                    + holder.holder().host() + ", listening on 127.0.0.1:7171, since " + holder.holder().since()
                    + "); stop it, or use another --db");
            assertThat(out.toString()).isEmpty();
            assertThat(db).doesNotExist();
        }
    }

    @Test
    void aMissingSuiteOptionIsAUsageError() {
        assertThat(execute("coordinator")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--model=NAME'");
        // --suite or --task: one of them, checked once the options parse.
        assertThat(execute("coordinator", "--model", "m", "--dry-run")).isEqualTo(2);
        assertThat(err.toString()).contains("give the suite to run (--suite FILE) or an lm-eval task file"
                + " (--task FILE.yaml)");
    }

    @Test
    void resultsAreExportedAsJsonlAndAsQuotedCsvWithWhatReproducesTheSummary() throws Exception {
        Path db = dir.resolve("r.db");
        Vignette a = new Vignette("a", "What is 2+2?", "4", Map.of("topic", "sums"));
        Vignette b = new Vignette("b", "=cmd|' /C calc'!A0", "-1", Map.of());
        Job job = new Job(JobId.of("0123456789abcdef-m-e1-0000"), new EvalSpec("s", List.of(a, b),
                new SpecParams(null, null, null, 1L, "m")), "0123456789abcdef", 1);
        try (JdbcResultStore store = JdbcResultStore.openSqlite(db).withScoring(new RunScoring("exact"))) {
            store.record(job, new JobOutcome(job.id(), List.of(
                    new ResponseRecord("a", "4", "m-2024", "stop", 12L, new Usage(3, 1)),
                    new ResponseRecord("b", "has, a comma and \"quotes\"\nand a line break"))), "w1");
        }

        assertThat(execute("results", "--db", db.toString(), "--format", "csv")).isZero();
        assertThat(out.toString()).startsWith("runId,model,epoch,jobId,vignetteId,prompt,expected,response,score,"
                        + "explanation,metadata,apiModel,finishReason,latencyMs,promptTokens,completionTokens,workerId,error,"
                        + "scoring,cached,cachedFrom,costUsd\r\n")
                .contains("0123456789abcdef,m,1,0123456789abcdef-m-e1-0000,a,What is 2+2?,4,4,1.0,,"
                        + "\"{\"\"topic\"\":\"\"sums\"\"}\",m-2024,stop,12,3,1,w1,,1,false,,\r\n")
                // A prompt that a spreadsheet would run is neutralized; the expected answer -1 is a number.
                .contains(",b,\"'=cmd|' /C calc'!A0\",-1,\"has, a comma and \"\"quotes\"\"\nand a line break\",0.0,");

        out.getBuffer().setLength(0);
        assertThat(execute("results", "--db", db.toString(), "--run", "0123456789abcdef")).isZero();
        String[] lines = out.toString().split("\n");
        assertThat(lines).hasSize(2);
        assertThat(lines[0]).startsWith("{\"runId\":\"0123456789abcdef\",\"model\":\"m\",\"epoch\":1,"
                + "\"jobId\":\"0123456789abcdef-m-e1-0000\",\"vignetteId\":\"a\",\"prompt\":\"What is 2+2?\","
                + "\"expected\":\"4\",\"response\":\"4\",\"score\":1.0,\"explanation\":null,"
                + "\"metadata\":{\"topic\":\"sums\"},\"apiModel\":\"m-2024\"");
        assertThat(lines[1]).contains("\"response\":\"has, a comma and \\\"quotes\\\"\\nand a line break\"")
                .contains("\"score\":0.0").contains("\"latencyMs\":null");

        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        assertThat(execute("results", "--db", db.toString(), "--run", "feedfacefeedface")).isEqualTo(2);
        assertThat(err.toString()).contains("the database holds no run 'feedfacefeedface'; it holds 0123456789abcdef");
    }

    @Test
    void exportingADatabaseThatDoesNotExistSaysSoAndCreatesNothing() {
        Path db = dir.resolve("nothing-here.db");
        assertThat(execute("results", "--db", db.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no such file: " + db);
        assertThat(db).doesNotExist();
    }

    @Test
    void theTopLevelHelpListsTheSubcommands() {
        assertThat(execute("--help")).isZero();
        assertThat(out.toString()).contains("coordinator").contains("results").contains("demo");
    }

    @Test
    void theConcurrencyHelpSaysWhatTheGovernorDoesOn429() {
        assertThat(execute("coordinator", "--help")).isZero();
        // EndpointGovernor.DECREASE is 0.75: a 429 cuts the limit to three quarters, not to half.
        String help = out.toString().replaceAll("\\s+", " ");
        assertThat(help).contains("its limit drops to three quarters").doesNotContainIgnoringCase("halve");
    }

    private int execute(String... args) {
        return WorkerMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true), Map.of());
    }
}
