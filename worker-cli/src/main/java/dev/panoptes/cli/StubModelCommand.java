package dev.panoptes.cli;

import dev.panoptes.console.Logging;
import dev.panoptes.control.Plural;
import dev.panoptes.demo.StubModelServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code java -jar worker.jar stub-model --listen 127.0.0.1:8000}: runs the demo's
 * {@link StubModelServer} until Ctrl-C (or SIGTERM), so that a newcomer can point a worker at a
 * model API without a GPU. It answers "What is A + B?" (also -, *) as the demo's models do.
 *
 * <p>Tests give it a latch to stop on and a callback that learns the server, instead of the
 * shutdown hook; {@link #call()} then never waits for a signal.
 */
@Command(name = "stub-model",
        sortOptions = false,
        usageHelpWidth = 100,
        mixinStandardHelpOptions = true,
        description = {
            "Serves a stub OpenAI-compatible model API (GET /v1/models, POST /v1/chat/completions, POST"
                    + " /v1/completions with echo and logprobs, POST /tokenize) until Ctrl-C,"
                    + " for trying Panoptes without a model: point a worker's --model-api at the URL it prints.",
            "It answers arithmetic prompts of the form 'What is A + B?' (also - and *), as models "
                    + DemoCommand.MODEL + " (wrong on purpose about one time in ten) and " + DemoCommand.SMALL_MODEL
                    + " (about one in three, and with a full stop after the number); any other prompt is echoed"
                    + " back as 're: <prompt>'. Answers depend only on the prompt, the model and the seed."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped cleanly (Ctrl-C or SIGTERM)",
            "1:could not listen (the message says why, for example the address is in use)",
            "2:invalid command line"
        },
        footerHeading = "%nExample:%n",
        footer = {
            "  java -jar worker.jar stub-model --listen 127.0.0.1:8000 --latency 20ms",
            "  java -jar worker.jar --coordinator 127.0.0.1:7070 --model-api http://127.0.0.1:8000/v1"
        })
final class StubModelCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private VerboseMixin verbose;

    @Option(names = "--listen", order = 10, paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:8000",
            converter = HostPortConverter.Listen.class,
            description = "Where to serve the API; port 0 picks a free one. Default: ${DEFAULT-VALUE}.")
    private InetSocketAddress listen;

    @Option(names = "--latency", order = 20, paramLabel = "DURATION", defaultValue = "20ms",
            converter = DurationConverter.class,
            description = "How long each answer takes, like a model's latency. Default: ${DEFAULT-VALUE}.")
    private Duration latency;

    @Option(names = "--concurrency", order = 30, paramLabel = "N", defaultValue = "64",
            description = "How many requests it answers at once, like a model server's slots; more wait their"
                    + " turn, and their latency starts when they get one. Default: ${DEFAULT-VALUE}.")
    private int concurrency;

    @Option(names = "--no-prompt-logprobs", order = 40,
            description = "Answer /v1/completions as a server without prompt log-probabilities does (llama.cpp's"
                    + " server: echo ignored, the generated token's log-probability only), to see a worker refuse"
                    + " log-likelihood (multiple-choice) jobs. By default it answers as vLLM does.")
    private boolean noPromptLogprobs;

    /** Counted down to stop; null to stop on Ctrl-C or SIGTERM. */
    private final CountDownLatch stop;
    private final Consumer<StubModelServer> onListening;

    /** The command as {@code worker.jar} runs it: it stops on Ctrl-C or SIGTERM. */
    StubModelCommand() {
        this(null, server -> { });
    }

    /** A command that stops when {@code stop} is counted down, and tells {@code onListening} its server. */
    StubModelCommand(CountDownLatch stop, Consumer<StubModelServer> onListening) {
        this.stop = stop;
        this.onListening = onListening;
    }

    @Override
    public Integer call() throws Exception {
        verbose.apply();
        if (concurrency < 1) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for option '--concurrency': must be at least 1, got " + concurrency);
        }
        InetSocketAddress bind = new InetSocketAddress(listen.getHostString(), listen.getPort());
        if (bind.isUnresolved()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--listen': cannot resolve host '"
                    + listen.getHostString() + "'");
        }
        StubModelServer server;
        try {
            server = StubModelServer.start(bind, latency, concurrency);
            server.servePromptLogprobs(!noPromptLogprobs);
        } catch (BindException e) {
            throw new IOException("cannot listen on " + listen.getHostString() + ":" + listen.getPort() + " ("
                    + e.getMessage() + "); is another stub model or model server running there? Pick another port"
                    + " with --listen", e);
        }
        CountDownLatch done = new CountDownLatch(1);
        try (server) {
            PrintWriter out = spec.commandLine().getOut();
            out.printf("stub model API at %s (models %s and %s, %d ms per answer); Ctrl-C stops it%n",
                    server.baseUrl(), DemoCommand.MODEL, DemoCommand.SMALL_MODEL, latency.toMillis());
            out.flush();
            onListening.accept(server);
            awaitStop(done);
            out.printf("stub model API stopped after %s%n", Plural.of(server.requestCount(), "answer"));
            out.flush();
        } finally {
            done.countDown();
        }
        return 0;
    }

    /**
     * Blocks until the latch is counted down, or until the JVM is asked to stop (Ctrl-C, SIGTERM);
     * then the shutdown hook waits (up to 5 s) for {@code done}, so that the server closes and the
     * last line is printed, and halts with 0: a requested stop is a clean exit (as the worker's).
     */
    private void awaitStop(CountDownLatch done) throws InterruptedException {
        if (stop != null) {
            stop.await();
            return;
        }
        CountDownLatch signalled = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            signalled.countDown();
            try {
                done.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                Logging.flushAndStop();
                Runtime.getRuntime().halt(0);
            }
        }, "stub-model-shutdown"));
        signalled.await();
    }
}
