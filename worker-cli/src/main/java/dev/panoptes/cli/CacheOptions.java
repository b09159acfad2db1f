package dev.panoptes.cli;

import dev.panoptes.control.cache.CachePolicy;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.time.Duration;

/**
 * {@code --no-cache} and {@code --cache-max-age}, the response cache's options (see
 * {@link CachePolicy}), as a mixin for any command that runs a suite. Filled in by picocli; read on
 * the command's thread.
 */
final class CacheOptions {
    @Option(names = "--no-cache", order = 146,
            description = "Ask the model every request, even one the database already holds an answer to. By default"
                    + " a request identical to one answered before (same model server, model, messages, sampling"
                    + " parameters, seed and epoch, in any run of --db) is served from the database without a model call, when"
                    + " --temperature is 0; at any other temperature, or none (the API's default samples), the"
                    + " model is always asked.")
    boolean noCache;

    @Option(names = "--cache-max-age", order = 147, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Serve from the cache only answers stored at most this long ago (30d, 12h, PT36H)."
                    + " Default: 30d.")
    Duration maxAge;

    /**
     * The policy the options ask for.
     *
     * @throws ParameterException when {@code --cache-max-age} is given with {@code --no-cache} (exit 2)
     */
    CachePolicy policy(CommandSpec spec) {
        if (noCache && maxAge != null) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--cache-max-age': it sets"
                    + " how old a cached answer may be, and --no-cache turns the cache off; give one of them");
        }
        if (noCache) {
            return CachePolicy.off();
        }
        return maxAge == null ? CachePolicy.defaults() : CachePolicy.maxAge(maxAge);
    }
}
