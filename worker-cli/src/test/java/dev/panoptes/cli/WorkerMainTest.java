package dev.panoptes.cli;

import dev.panoptes.console.Logging;
import dev.panoptes.worker.WorkerSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code java -jar worker.jar ...}, parsed with picocli's execute() and a starter that only records. */
class WorkerMainTest {
    private static final String[] REQUIRED = {
        "--coordinator", "10.0.0.5:7070", "--model-api", "http://localhost:8000/v1", "--model", "llama-3.1-8b"
    };

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final List<WorkerSettings> started = new ArrayList<>();
    private Map<String, String> env = Map.of();
    private WorkerMain.WorkerStarter starter = settings -> {
        started.add(settings);
        return 0;
    };

    @AfterEach
    void restoreLogLevel() {
        Logging.setVerbose(false);
    }

    @Test
    void parsesEveryOption() {
        int exit = execute("--coordinator", "coord.example:7070", "--model-api", "https://api.example.com/v1",
                "--model", "gpt-4o-mini", "--api-key", "sk-cli", "--id", "gpu-box_1", "--capacity", "8",
                "--token", "t0k", "--heartbeat", "2s", "--heartbeat-timeout", "PT10S", "--grace", "1m",
                "--request-timeout", "90s", "--no-model-check", "-v");

        assertThat(exit).isZero();
        WorkerSettings s = onlyStarted();
        assertThat(s.coordinator().getHostString()).isEqualTo("coord.example");
        assertThat(s.coordinator().getPort()).isEqualTo(7070);
        assertThat(s.modelApi()).isEqualTo(URI.create("https://api.example.com/v1"));
        assertThat(s.model()).isEqualTo("gpt-4o-mini");
        assertThat(s.apiKey()).isEqualTo("sk-cli");
        assertThat(s.workerId()).isEqualTo("gpu-box_1");
        assertThat(s.capacity()).isEqualTo(8);
        assertThat(s.options().token()).isEqualTo("t0k");
        assertThat(s.options().heartbeatInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.options().heartbeatTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.options().labels()).containsEntry("model", "gpt-4o-mini");
        assertThat(s.grace()).isEqualTo(Duration.ofMinutes(1));
        assertThat(s.requestTimeout()).isEqualTo(Duration.ofSeconds(90));
        assertThat(s.checkModelApi()).isFalse();
        assertThat(s.verbose()).isTrue();
    }

    @Test
    void takesSeveralCoordinatorAddressesInTheOrderGiven() {
        assertThat(execute("--coordinator", "coord-a:7070,coord-b:7071", "--model-api", "http://localhost:8000/v1",
                "--model", "m")).isZero();
        WorkerSettings s = onlyStarted();
        assertThat(s.coordinators()).extracting(a -> a.getHostString() + ":" + a.getPort())
                .containsExactly("coord-a:7070", "coord-b:7071");
        assertThat(s.startupLine()).contains("coordinators coord-a:7070, coord-b:7071");
    }

    @Test
    void servesEveryModelNamedAndWithoutAnyOffersWhatTheApiLists() {
        assertThat(execute("--coordinator", "c:7070", "--model-api", "http://localhost:8000/v1", "--model", "a",
                "--model", "b", "--model", "a")).isZero();
        WorkerSettings named = onlyStarted();
        assertThat(named.models()).containsExactly("a", "b");
        assertThat(named.model()).isEqualTo("a");
        assertThat(named.startupLine()).contains(", models a, b, capacity");

        started.clear();
        assertThat(execute("--coordinator", "c:7070", "--model-api", "http://localhost:8000/v1")).isZero();
        WorkerSettings discovered = onlyStarted();
        assertThat(discovered.models()).isEmpty();
        assertThat(discovered.model()).isNull();
        assertThat(discovered.startupLine()).contains(", models: those the API lists, capacity");
    }

    @Test
    void aModelNamedLikeACommandIsAModelName() {
        assertThat(execute("--coordinator", "c:7070", "--model-api", "http://localhost:8000/v1", "--model",
                "stub-model", "--model", "report")).isZero();
        assertThat(onlyStarted().models()).containsExactly("stub-model", "report");
    }

    @Test
    void withoutTheModelApiCheckTheModelsMustBeNamed() {
        assertThat(execute("--coordinator", "c:7070", "--model-api", "http://localhost:8000/v1", "--no-model-check"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option '--model=NAME': without the model API check"
                + " (--no-model-check) the worker cannot ask the API which models it serves");
        assertThat(started).isEmpty();
    }

    @Test
    void appliesTheDocumentedDefaults() {
        assertThat(execute(REQUIRED)).isZero();

        WorkerSettings s = onlyStarted();
        assertThat(s.capacity()).isEqualTo(64);
        assertThat(s.requests()).isEqualTo(64);
        assertThat(s.sandboxes()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(s.options().heartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.options().heartbeatTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(s.grace()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.requestTimeout()).isNull();
        assertThat(s.apiKey()).isNull();
        assertThat(s.options().token()).isNull();
        assertThat(s.checkModelApi()).isTrue();
        assertThat(s.verbose()).isFalse();
        assertThat(s.workerId()).matches("[A-Za-z0-9._:@-]{1,128}").endsWith("-" + ProcessHandle.current().pid());
    }

    @Test
    void takesTheApiKeyAndTheTokenFromTheEnvironment() {
        env = Map.of(WorkerMain.API_KEY_ENV, "sk-from-env", WorkerMain.TOKEN_ENV, "token-from-env");

        assertThat(execute(REQUIRED)).isZero();

        assertThat(onlyStarted().apiKey()).isEqualTo("sk-from-env");
        assertThat(onlyStarted().options().token()).isEqualTo("token-from-env");
    }

    @Test
    void prefersTheCommandLineToTheEnvironment() {
        env = Map.of(WorkerMain.API_KEY_ENV, "sk-from-env", WorkerMain.TOKEN_ENV, "token-from-env");

        assertThat(execute(with(REQUIRED, "--api-key", "sk-cli", "--token", "token-cli"))).isZero();

        assertThat(onlyStarted().apiKey()).isEqualTo("sk-cli");
        assertThat(onlyStarted().options().token()).isEqualTo("token-cli");
    }

    @Test
    void treatsBlankEnvironmentVariablesAsUnset() {
        env = Map.of(WorkerMain.API_KEY_ENV, "  ", WorkerMain.TOKEN_ENV, "");

        assertThat(execute(REQUIRED)).isZero();

        assertThat(onlyStarted().apiKey()).isNull();
        assertThat(onlyStarted().options().token()).isNull();
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of(with(REQUIRED, "--capacity", "0"),
                        "Invalid value for option '--capacity': must be at least 1, got 0"),
                Arguments.of(with(REQUIRED, "--capacity", "many"),
                        "Invalid value for option '--capacity': must be a whole number, got 'many'"),
                Arguments.of(with(REQUIRED, "--capacity", "5000"),
                        "Invalid value for option '--capacity': must be at most 1024, got 5000"),
                Arguments.of(with(REQUIRED, "--sandboxes", "-1"),
                        "Invalid value for option '--sandboxes': must be 0 to 1024, got -1"),
                Arguments.of(with(REQUIRED, "--requests", "0"),
                        "Invalid value for option '--requests': must be at least 1, got 0"),
                Arguments.of(with(REQUIRED, "--requests", "-3"),
                        "Invalid value for option '--requests': must be at least 1, got -3"),
                Arguments.of(with(REQUIRED, "--requests", "lots"),
                        "Invalid value for option '--requests': must be a whole number, got 'lots'"),
                Arguments.of(with(REQUIRED, "--requests", "9000"),
                        "Invalid value for option '--requests': must be at most 8192, got 9000"),
                Arguments.of(replacing("--coordinator", "localhost"),
                        "Invalid value for option '--coordinator': expected HOST:PORT"),
                Arguments.of(replacing("--coordinator", "host:99999"),
                        "Invalid value for option '--coordinator': port must be from 1 to 65535, got 99999"),
                Arguments.of(replacing("--coordinator", "host:http"),
                        "Invalid value for option '--coordinator': port must be a number from 1 to 65535, got 'http'"),
                Arguments.of(replacing("--coordinator", "[::1"),
                        "Invalid value for option '--coordinator': expected HOST:PORT"),
                Arguments.of(replacing("--coordinator", "a:7070,b"),
                        "Invalid value for option '--coordinator': expected HOST:PORT (for example 10.0.0.5:7070 or"
                                + " [::1]:7070), got 'b'"),
                Arguments.of(replacing("--coordinator", "a:7070,"),
                        "Invalid value for option '--coordinator': expected HOST:PORT"),
                Arguments.of(replacing("--model-api", "not a url"),
                        "Invalid value for option '--model-api': expected an http(s) URL"),
                Arguments.of(replacing("--model-api", "ftp://files.example/v1"),
                        "Invalid value for option '--model-api': expected an http(s) URL"),
                Arguments.of(replacing("--model-api", "http:///v1"),
                        "Invalid value for option '--model-api': URL 'http:///v1' has no host"),
                Arguments.of(replacing("--model-api", "http://localhost:8000/v1?key=1"),
                        "Invalid value for option '--model-api': URL 'http://localhost:8000/v1' (its user info, query"
                                + " or fragment not repeated here) must not have a query"),
                Arguments.of(with(REQUIRED, "--heartbeat", "5"),
                        "Invalid value for option '--heartbeat': expected a duration such as 500ms, 5s, 2m"),
                Arguments.of(with(REQUIRED, "--heartbeat", "0s"),
                        "Invalid value for option '--heartbeat': must be a positive duration, got '0s'"),
                Arguments.of(with(REQUIRED, "--grace", "soon"),
                        "Invalid value for option '--grace': expected a duration"),
                Arguments.of(with(REQUIRED, "--request-timeout", "-5s"),
                        "Invalid value for option '--request-timeout': expected a duration"),
                Arguments.of(with(REQUIRED, "--heartbeat", "5s", "--heartbeat-timeout", "5s"),
                        "Invalid value for option '--heartbeat-timeout': must be longer than --heartbeat (5s),"
                                + " got 5s"),
                Arguments.of(with(REQUIRED, "--id", "has space"),
                        "Invalid value for option '--id': must be 1 to 128 characters from [A-Za-z0-9._:@-],"
                                + " got 'has space'"),
                Arguments.of(with(REQUIRED, "--id", "x".repeat(129)),
                        "Invalid value for option '--id': must be 1 to 128 characters"),
                Arguments.of(replacing("--model", " "),
                        "Invalid value for option '--model': must not be empty"),
                Arguments.of(with(REQUIRED, "--capacity"),
                        "Missing required parameter for option '--capacity'"),
                Arguments.of(with(REQUIRED, "--bogus"),
                        "Unknown option: '--bogus'"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("badValues")
    void refusesABadValueWithOneLineNamingTheOptionAndExitCode2(String[] args, String message) {
        int exit = execute(args);

        assertThat(exit).isEqualTo(2);
        assertThat(started).isEmpty();
        assertThat(err.toString().lines().findFirst()).hasValueSatisfying(line -> assertThat(line).startsWith(message));
        assertThat(err.toString()).endsWith("Try 'worker.jar --help' for more information." + System.lineSeparator())
                .doesNotContain("\tat ").doesNotContain("Exception");
        assertThat(out.toString()).isEmpty();
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {
        "http://user:secret@127.0.0.1:8000/v1?api-key=SECRET",
        "http://127.0.0.1:8000/v1?api-key=SECRET",
        "http://127.0.0.1:8000/v1?key=SECRET#secret",
        "ftp://user:secret@127.0.0.1:8000/v1?token=SECRET",
        "http://user:se cret@127.0.0.1:8000/v1?key=SE CRET",
        "127.0.0.1:8000/v1?token=SECRET",
    })
    void refusesAModelApiUrlWithCredentialsWithoutRepeatingThem(String url) {
        int exit = execute(replacing("--model-api", url));

        assertThat(exit).isEqualTo(2);
        assertThat(started).isEmpty();
        assertThat(err.toString()).startsWith("Invalid value for option '--model-api': ")
                .containsAnyOf("--api-key", "expected an http(s) URL")
                .doesNotContainIgnoringCase("secret").doesNotContainIgnoringCase("se cret");
    }

    @Test
    void withoutATokenTheMetricsStayOnLoopbackUnlessToldOtherwise() {
        assertThat(execute(with(REQUIRED, "--metrics", "0.0.0.0:9464"))).isEqualTo(2);
        assertThat(started).isEmpty();
        assertThat(err.toString().lines().findFirst()).hasValue("Invalid value for option '--metrics': an admin"
                + " endpoint on 0.0.0.0:9464 would be open to other machines (it is not a loopback address) without"
                + " authentication, since there is no token. Set a token (--token or PANOPTES_TOKEN; scrapers then"
                + " send 'Authorization: Bearer TOKEN'), or serve it on 127.0.0.1, or add --metrics-insecure to serve"
                + " it open anyway");

        assertThat(execute(with(REQUIRED, "--metrics", "0.0.0.0:9464", "--token", "t0k"))).isZero();
        assertThat(onlyStarted().metrics().getHostString()).isEqualTo("0.0.0.0");
        assertThat(onlyStarted().startupLine()).contains("metrics on 0.0.0.0:9464 (with the token)")
                .doesNotContain("t0k");
        started.clear();
        env = Map.of(WorkerMain.TOKEN_ENV, "from-env");
        assertThat(execute(with(REQUIRED, "--metrics", "0.0.0.0:9464"))).as("the token from the environment").isZero();
        started.clear();
        env = Map.of();
        assertThat(execute(with(REQUIRED, "--metrics", "0.0.0.0:9464", "--metrics-insecure"))).isZero();
        assertThat(onlyStarted().metricsInsecure()).isTrue();
        assertThat(onlyStarted().startupLine()).contains("metrics on 0.0.0.0:9464 (open, --metrics-insecure)");
        started.clear();
        assertThat(execute(with(REQUIRED, "--metrics", "127.0.0.1:9464"))).as("loopback needs no token").isZero();
        assertThat(onlyStarted().metricsInsecure()).isFalse();
    }

    @Test
    void metricsInsecureWithoutMetricsOrWithATokenIsAUsageError() {
        assertThat(execute(with(REQUIRED, "--metrics-insecure"))).isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--metrics-insecure': it loosens --metrics,"
                + " which is not given");
        err.getBuffer().setLength(0);
        assertThat(execute(with(REQUIRED, "--metrics", "0.0.0.0:9464", "--metrics-insecure", "--token", "t0k")))
                .isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--metrics-insecure': there is a token")
                .doesNotContain("t0k");
        assertThat(started).isEmpty();
    }

    @Test
    void theEndpointLabelIsTheModelApiUrlWithoutATrailingSlash() {
        assertThat(execute(replacing("--model-api", "http://127.0.0.1:8000/v1/"))).isZero();
        assertThat(onlyStarted().options().labels()).containsEntry("endpoint", "http://127.0.0.1:8000/v1");
        assertThat(onlyStarted().startupLine()).contains("model API http://127.0.0.1:8000/v1/");
    }

    @Test
    void reportsAMissingCoordinatorTheWayPicocliReportsARequiredOption() {
        int exit = execute("--model-api", "http://localhost:8000/v1", "--model", "llama");

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString().lines()).containsExactly(
                "Missing required option: '--coordinator=HOST:PORT'",
                "Try 'worker.jar --help' for more information.");
    }

    @Test
    void namesEveryMissingOptionAtOnce() {
        int exit = execute();

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString().lines().findFirst()).contains(
                "Missing required options: '--coordinator=HOST:PORT', '--model-api=URL'");
    }

    @Test
    void suggestsTheOptionAMisspeltOneProbablyMeant() {
        int exit = execute(with(REQUIRED, "--capacty", "2"));

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown options: '--capacty', '2'").contains("--capacity");
    }

    @Test
    void printsHelpWithEveryOptionItsDefaultsTheExitCodesAndTheEnvironment() {
        env = Map.of(WorkerMain.API_KEY_ENV, "sk-secret-in-env", WorkerMain.TOKEN_ENV, "token-secret-in-env");

        int exit = execute("--help");

        assertThat(exit).isZero();
        String help = out.toString();
        assertThat(help).startsWith("Usage: worker.jar ");
        for (String option : List.of("--coordinator=HOST:PORT", "--model-api=URL", "--model=NAME", "--api-key=KEY",
                "--id=ID", "--requests=N", "--capacity=N", "--token=TOKEN", "--heartbeat=DURATION", "--heartbeat-timeout=DURATION",
                "--grace=DURATION", "--request-timeout=DURATION", "--no-model-check", "-v, --verbose", "-h, --help",
                "-V, --version")) {
            assertThat(help).contains(option);
        }
        assertThat(help).contains("Default: 64, for a batching server").contains("Default: 5s.").contains("Default: 30s.")
                .contains("Exit codes:").contains("2   invalid command line")
                .contains("3   the model API is unusable as configured: bad URL, key or model")
                .contains("4   the coordinator rejected the registration for good")
                .contains("OPENAI_API_KEY").contains("PANOPTES_TOKEN")
                .doesNotContain("sk-secret-in-env").doesNotContain("token-secret-in-env");
        assertThat(started).isEmpty();
    }

    @Test
    void printsItsVersionAndProtocol() {
        assertThat(execute("--version")).isZero();

        assertThat(out.toString()).contains("worker.jar").contains("Panoptes worker protocol 1");
    }

    @Test
    void neverPrintsTheApiKeyOrTheToken() {
        execute(with(REQUIRED, "--api-key", "sk-cli-secret", "--token", "token-cli-secret"));

        WorkerSettings s = onlyStarted();
        assertThat(s.startupLine())
                .contains("worker " + s.workerId()).contains("coordinator 10.0.0.5:7070")
                .contains("model API http://localhost:8000/v1").contains("model llama-3.1-8b").contains("capacity 64 jobs")
                .contains("64 requests in flight").contains("API key set").contains("token set")
                .doesNotContain("sk-cli-secret").doesNotContain("token-cli-secret");
        assertThat(s.toString()).doesNotContain("sk-cli-secret").doesNotContain("token-cli-secret");
        assertThat(out.toString() + err.toString()).doesNotContain("secret");
    }

    @Test
    void refusesAnApiKeyFromTheEnvironmentThatAHeaderCannotCarryWithoutPrintingIt() {
        env = Map.of(WorkerMain.API_KEY_ENV, "sk with spaces");

        int exit = execute(REQUIRED);

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for environment variable OPENAI_API_KEY: an API key must"
                + " be printable ASCII without spaces; character 3 is not").doesNotContain("sk with spaces");
    }

    @Test
    void refusesAnApiKeyOptionThatAHeaderCannotCarryWithoutPrintingIt() {
        int exit = execute(with(REQUIRED, "--api-key", "sk\u00e9"));

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).startsWith("Invalid value for option '--api-key'").doesNotContain("sk\u00e9");
    }

    @Test
    void reportsARuntimeFailureOnOneLineWithExitCode1() {
        starter = settings -> {
            throw new IllegalStateException("cannot open the model API at http://localhost:8000/v1");
        };

        int exit = execute(REQUIRED);

        assertThat(exit).isEqualTo(1);
        assertThat(err.toString().lines())
                .containsExactly("worker.jar: cannot open the model API at http://localhost:8000/v1");
    }

    @Test
    void exitsWithTheCodeTheWorkerEndedWith() {
        starter = settings -> WorkerMain.EXIT_MODEL_API_UNUSABLE;
        assertThat(execute(REQUIRED)).isEqualTo(3);

        starter = settings -> WorkerMain.EXIT_REJECTED;
        assertThat(execute(REQUIRED)).isEqualTo(4);
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void theJobsHeldFollowTheRequestsInFlightUnlessGiven() {
        execute(with(REQUIRED, "--requests", "16"));
        execute(with(REQUIRED, "--requests", "16", "--capacity", "2"));
        execute(with(REQUIRED, "--requests", "4000"));

        assertThat(started).extracting(WorkerSettings::capacity).containsExactly(16, 2, 1024);
        assertThat(started).extracting(WorkerSettings::requests).containsExactly(16, 16, 4000);
        assertThat(started.get(1).startupLine()).contains("capacity 2 jobs, 16 requests in flight");
    }

    @Test
    void sandboxesAreCountedApartFromRequests() {
        execute(with(REQUIRED, "--sandboxes", "3", "--requests", "16"));
        execute(with(REQUIRED, "--sandboxes", "0"));

        assertThat(started).extracting(WorkerSettings::sandboxes).containsExactly(3, 0);
        assertThat(started).extracting(WorkerSettings::requests).containsExactly(16, 64);
    }

    @Test
    void theStartupLineSaysWhenTheModelApiCheckIsSkipped() {
        execute(REQUIRED);
        execute(with(REQUIRED, "--no-model-check"));

        assertThat(started).extracting(WorkerSettings::startupLine).satisfiesExactly(
                checked -> assertThat(checked).doesNotContain("check skipped"),
                skipped -> assertThat(skipped).endsWith(", model API check skipped (--no-model-check)"));
    }

    @Test
    void addsTheStackTraceToARuntimeFailureWithVerbose() {
        starter = settings -> {
            throw new IllegalStateException("boom");
        };

        int exit = execute(with(REQUIRED, "-v"));

        assertThat(exit).isEqualTo(1);
        assertThat(err.toString()).startsWith("worker.jar: boom").contains("java.lang.IllegalStateException: boom")
                .contains("\tat ");
    }

    @Test
    void logsAtDebugLevelWithVerboseOnly() {
        Logger root = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        List<Boolean> debugWhileRunning = new ArrayList<>();
        starter = settings -> {
            debugWhileRunning.add(root.isDebugEnabled());
            return 0;
        };

        execute(REQUIRED);
        execute(with(REQUIRED, "--verbose"));

        assertThat(debugWhileRunning).containsExactly(false, true);
    }

    @Test
    void runReturnsTheExitCodeInsteadOfExiting() {
        PrintWriter o = new PrintWriter(out, true);
        PrintWriter e = new PrintWriter(err, true);

        assertThat(WorkerMain.run(new String[] {"--help"}, o, e, Map.of())).isZero();
        assertThat(WorkerMain.run(new String[] {"--capacity", "0"}, o, e, Map.of())).isEqualTo(2);
        assertThat(out.toString()).startsWith("Usage: worker.jar");
        assertThat(err.toString()).startsWith("Invalid value for option '--capacity'");
    }

    // ---- helpers ----

    private int execute(String... args) {
        CommandLine cmd = WorkerMain.newCommandLine(env, settings -> starter.start(settings));
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        return cmd.execute(args);
    }

    private WorkerSettings onlyStarted() {
        assertThat(started).as("settings passed to the starter; stderr: %s", err).hasSize(1);
        return started.get(0);
    }

    /** The required options with {@code option}'s value replaced. */
    private static String[] replacing(String option, String value) {
        String[] args = REQUIRED.clone();
        for (int i = 0; i < args.length; i += 2) {
            if (args[i].equals(option)) {
                args[i + 1] = value;
            }
        }
        return args;
    }

    private static String[] with(String[] base, String... more) {
        String[] all = Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }
}
