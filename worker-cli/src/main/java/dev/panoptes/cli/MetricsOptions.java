package dev.panoptes.cli;

import dev.panoptes.admin.AdminServer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.net.InetSocketAddress;

/**
 * {@code --metrics} and {@code --metrics-insecure}, the admin endpoint's options, as the worker and
 * the coordinator both take them, and the one rule for where it may listen (see
 * {@link AdminServer#checkExposure}): behind the token, or on loopback, or open on purpose. Filled
 * in by picocli; read on the command's thread.
 */
final class MetricsOptions {
    @Option(names = "--metrics", order = 136, paramLabel = "HOST:PORT", converter = HostPortConverter.Listen.class,
            description = "Serve an admin endpoint here: GET /metrics (Prometheus text: jobs, model calls and their"
                    + " latency, tokens, 429s, connections) and, on the coordinator, GET /status (the run and its"
                    + " workers as JSON; see 'worker.jar status'). With a token (--token), it needs 'Authorization:"
                    + " Bearer TOKEN', the coordinator's token; without one, only a loopback address such as"
                    + " 127.0.0.1 is served (see --metrics-insecure). Port 0 picks a free one. Default: off.")
    InetSocketAddress metrics;

    @Option(names = "--metrics-insecure", order = 137,
            description = "Without a token, serve --metrics on an address other machines reach anyway, open to"
                    + " anyone who reaches it (for a network only the scraper reaches).")
    boolean insecure;

    /**
     * Checks the two options against the token; a problem is a usage error (exit 2) that says how
     * to fix it.
     *
     * @param hasToken whether the command has a token (from {@code --token} or the environment)
     * @param guarded  what the token then guards, as the message says it: "/metrics then requires
     *                 wherever it is served", say
     */
    void check(CommandSpec spec, boolean hasToken, String guarded) {
        if (insecure && metrics == null) {
            throw CliErrors.invalid(spec, "--metrics-insecure", "it loosens --metrics, which is not given");
        }
        if (insecure && hasToken) {
            throw CliErrors.invalid(spec, "--metrics-insecure", "there is a token (--token or " + WorkerMain.TOKEN_ENV
                    + "), which " + guarded + "; leave --metrics-insecure out");
        }
        if (metrics != null) {
            try {
                AdminServer.checkExposure(metrics, hasToken, insecure);
            } catch (IllegalArgumentException e) {
                throw CliErrors.invalid(spec, "--metrics", e.getMessage());
            }
        }
    }
}
