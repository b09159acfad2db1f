package dev.panoptes.control;

import java.net.URI;
import java.util.Locale;

/**
 * The text that identifies which model server answers a run's requests
 * ({@link SpecParams#modelSource()}), in the run's id and in every request key: a cached answer
 * may stand only for a call that would have reached the same model.
 * <ul>
 *   <li>{@code model-id NAME}: the name a user gives ({@code --model-id}), for a fleet of
 *       identical servers behind different URLs that should share answers, or to tell apart two
 *       deployments behind one URL (a new snapshot, quantized weights);</li>
 *   <li>{@code endpoint URL}: the model API's base URL ({@code eval}'s {@code --model-api}),
 *       normalized so that spellings of one URL agree: scheme and host in lower case, the
 *       scheme's default port and trailing slashes dropped; user info is dropped (a secret never
 *       lands in a run's identity), the query kept (it can choose a deployment).</li>
 * </ul>
 * The two forms never collide: each starts with its own word.
 *
 * <p>Stateless; any thread.
 */
public final class ModelSource {
    private ModelSource() {
    }

    /** The source a user names. */
    public static String named(String modelId) {
        return "model-id " + modelId.strip();
    }

    /** The source of a model API at {@code baseUrl}. */
    public static String endpoint(URI baseUrl) {
        String scheme = baseUrl.getScheme() == null ? "" : baseUrl.getScheme().toLowerCase(Locale.ROOT);
        String host = baseUrl.getHost() == null ? "" : baseUrl.getHost().toLowerCase(Locale.ROOT);
        int port = baseUrl.getPort();
        boolean defaultPort = port == -1 || ("http".equals(scheme) && port == 80) || ("https".equals(scheme) && port == 443);
        String path = baseUrl.getRawPath() == null ? "" : baseUrl.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        String query = baseUrl.getRawQuery() == null ? "" : "?" + baseUrl.getRawQuery();
        return "endpoint " + scheme + "://" + host + (defaultPort ? "" : ":" + port) + path + query;
    }
}
