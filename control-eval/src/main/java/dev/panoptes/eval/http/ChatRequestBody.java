package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.panoptes.eval.LoglikelihoodRequest;
import dev.panoptes.eval.ModelRequest;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The body {@link HttpModelClient} posts to {@code /chat/completions} for a request, for those who
 * want to see it without sending it (a dry run): the same code builds both, so what is shown is
 * what a worker sends. The system prompt comes first, then the request's turns (few-shot examples,
 * then the prompt), then the model and the sampling parameters the request sets.
 *
 * <p>Stateless; its mappers are thread-safe: any thread.
 */
public final class ChatRequestBody {
    private static final ChatCompletions COMPACT = new ChatCompletions(new ObjectMapper());
    private static final ChatCompletions INDENTED =
            new ChatCompletions(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT));

    private ChatRequestBody() {
    }

    /**
     * The model a worker's client asks for a request: the request's own, else the client's
     * default ({@code --model} of the worker).
     *
     * @param workerModel the client's default model, or null when it has none
     * @return the model, or null when neither names one (the call then fails as the worker's fault)
     */
    public static String modelFor(ModelRequest request, String workerModel) {
        String asked = request.params().model();
        return asked != null ? asked : workerModel;
    }

    /**
     * The request's JSON body, as UTF-8 text.
     *
     * @param workerModel the model a worker without one in the request would ask, or null
     * @param indented    true for one field per line (for people; the same JSON value)
     * @throws IllegalArgumentException when neither the request nor {@code workerModel} names a model
     */
    public static String json(ModelRequest request, String workerModel, boolean indented) {
        Objects.requireNonNull(request, "request");
        String model = modelFor(request, workerModel);
        if (model == null) {
            throw new IllegalArgumentException("the request names no model and no default model is given");
        }
        return new String((indented ? INDENTED : COMPACT).requestBody(model, request), StandardCharsets.UTF_8);
    }

    /**
     * The JSON body a worker posts to {@code /completions} for a multiple-choice vignette's
     * log-likelihoods (see {@link HttpModelClient#loglikelihoodAsync}), indented for people.
     *
     * @throws IllegalArgumentException when neither the request nor {@code workerModel} names a model
     */
    public static String json(LoglikelihoodRequest request, String workerModel) {
        Objects.requireNonNull(request, "request");
        String model = request.params().model() != null ? request.params().model() : workerModel;
        if (model == null) {
            throw new IllegalArgumentException("the request names no model and no default model is given");
        }
        return new String(new TextCompletions(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT))
                .requestBody(model, request), StandardCharsets.UTF_8);
    }
}
