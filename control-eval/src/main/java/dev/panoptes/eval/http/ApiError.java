package dev.panoptes.eval.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.util.Optional;

/**
 * The error a model server put in a response body, in whichever of the common envelopes it
 * uses. Every part may be null. Immutable; parsed on whichever thread reads the answer.
 *
 * <ul>
 *   <li>OpenAI, and llama.cpp's server: {@code {"error":{"message","type","code"}}} (llama.cpp
 *       puts the HTTP status in {@code code});</li>
 *   <li>vLLM's older flat envelope: {@code {"object":"error","message","type","param","code"}};</li>
 *   <li>Ollama: {@code {"error":"text"}};</li>
 *   <li>FastAPI-based gateways: {@code {"detail": "text" or [...]}}.</li>
 * </ul>
 *
 * @param message the server's own message, for humans
 * @param type    the error type ({@code invalid_request_error}, {@code insufficient_quota}, ...)
 * @param code    the error code, as text ({@code rate_limit_exceeded}, {@code 503}, ...)
 */
record ApiError(String message, String type, String code) {
    private static final String INSUFFICIENT_QUOTA = "insufficient_quota";

    /** The error envelope in {@code body}, or empty when the body is not JSON or has none. */
    static Optional<ApiError> parse(ObjectMapper mapper, String body) {
        if (body == null || body.isBlank()) {
            return Optional.empty();
        }
        JsonNode root;
        try {
            root = mapper.readTree(body);
        } catch (IOException e) {
            return Optional.empty();
        }
        if (root == null || !root.isObject()) {
            return Optional.empty();
        }
        JsonNode error = root.get("error");
        if (error != null && error.isObject()) {
            return Optional.of(new ApiError(text(error.get("message")), text(error.get("type")),
                    text(error.get("code"))));
        }
        if (error != null && error.isTextual()) {
            return Optional.of(new ApiError(error.asText(), null, null));
        }
        if ("error".equals(text(root.get("object"))) || root.hasNonNull("message")) {
            return Optional.of(new ApiError(text(root.get("message")), text(root.get("type")),
                    text(root.get("code"))));
        }
        JsonNode detail = root.get("detail");
        if (detail != null && !detail.isNull()) {
            return Optional.of(new ApiError(text(detail), null, null));
        }
        return Optional.empty();
    }

    /** True when the account is out of quota or credit: waiting and retrying never helps. */
    boolean isInsufficientQuota() {
        return INSUFFICIENT_QUOTA.equals(code) || INSUFFICIENT_QUOTA.equals(type)
                || (message != null && message.contains(INSUFFICIENT_QUOTA));
    }

    /** The code as an HTTP status, when the server put one there (llama.cpp does), else -1. */
    int codeAsStatus() {
        if (code == null) {
            return -1;
        }
        try {
            int status = Integer.parseInt(code.trim());
            return status >= 100 && status <= 599 ? status : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** "message (type t, code c)", leaving out what is missing. */
    String describe() {
        StringBuilder s = new StringBuilder(message == null ? "(no message)" : Texts.excerpt(message, 500));
        if (type != null || code != null) {
            s.append(" (");
            if (type != null) {
                s.append("type ").append(type);
            }
            if (code != null) {
                s.append(type != null ? ", " : "").append("code ").append(code);
            }
            s.append(')');
        }
        return s.toString();
    }

    private static String text(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return null;
        }
        return node.isValueNode() ? node.asText() : node.toString();
    }
}
