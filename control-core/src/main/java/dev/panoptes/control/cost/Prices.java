package dev.panoptes.control.cost;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.panoptes.control.Job;
import dev.panoptes.control.JobOutcome;
import dev.panoptes.control.ResponseRecord;
import dev.panoptes.control.Usage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Token prices by model name (the name a run asks for, as in {@code --model}), from
 * {@code MODEL=IN/OUT} entries ({@link #parseEntry}) or a JSON prices file ({@link #read}).
 * Immutable and thread-safe; {@link #with} and {@link #withAll} return new instances.
 *
 * <p>The prices file is one JSON object, a key per model, each with its USD per million input
 * and output tokens:
 * <pre>{@code {"gpt-4o-mini": {"input": 0.15, "output": 0.60}, "llama-3.1-8b": {"input": 0, "output": 0}}}</pre>
 */
public final class Prices {
    /** No prices: nothing is costed. */
    public static final Prices NONE = new Prices(Map.of());

    private final Map<String, Price> byModel;

    private Prices(Map<String, Price> byModel) {
        this.byModel = Map.copyOf(byModel);
    }

    /** Prices for exactly these models. */
    public static Prices of(Map<String, Price> byModel) {
        return new Prices(byModel);
    }

    /**
     * Parses one {@code MODEL=IN/OUT} entry, such as {@code gpt-4o-mini=0.15/0.60}: the model's
     * USD per million input and output tokens. The model is everything before the last {@code =},
     * so names with a {@code /} ({@code meta-llama/Llama-3.1-8B=0.1/0.2}) work.
     *
     * @throws IllegalArgumentException saying what is wanted when the entry is not of that form
     */
    public static Map.Entry<String, Price> parseEntry(String entry) {
        int eq = entry.lastIndexOf('=');
        String model = eq < 0 ? "" : entry.substring(0, eq).trim();
        String[] figures = eq < 0 ? new String[0] : entry.substring(eq + 1).split("/", -1);
        if (model.isEmpty() || figures.length != 2) {
            throw new IllegalArgumentException("must be MODEL=IN/OUT, USD per million input and output tokens"
                    + " (such as gpt-4o-mini=0.15/0.60), got '" + entry + "'");
        }
        try {
            return Map.entry(model, new Price(Double.parseDouble(figures[0].trim()),
                    Double.parseDouble(figures[1].trim())));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("must be MODEL=IN/OUT with IN and OUT numbers of USD per million"
                    + " tokens (such as gpt-4o-mini=0.15/0.60), got '" + entry + "'");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " in '" + entry + "'");
        }
    }

    /**
     * Reads a prices file (the JSON form in the class comment).
     *
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException naming the file and the model when its content is not of
     *                                  that form
     */
    public static Prices read(Path file) throws IOException {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(file + " is not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException(file + " must hold one JSON object, a key per model:"
                    + " {\"MODEL\": {\"input\": USD, \"output\": USD}} (per million tokens)");
        }
        Map<String, Price> prices = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            JsonNode in = e.getValue().get("input");
            JsonNode out = e.getValue().get("output");
            if (in == null || out == null || !in.isNumber() || !out.isNumber()) {
                throw new IllegalArgumentException(file + ": model '" + e.getKey() + "' needs \"input\" and"
                        + " \"output\" numbers, USD per million tokens, such as {\"input\": 0.15, \"output\": 0.60}");
            }
            try {
                prices.put(e.getKey(), new Price(in.doubleValue(), out.doubleValue()));
            } catch (IllegalArgumentException bad) {
                throw new IllegalArgumentException(file + ": model '" + e.getKey() + "': " + bad.getMessage());
            }
        }
        return new Prices(prices);
    }

    /** These prices with {@code model}'s set (replacing one it had). */
    public Prices with(String model, Price price) {
        Map<String, Price> all = new LinkedHashMap<>(byModel);
        all.put(model, price);
        return new Prices(all);
    }

    /** These prices with each of {@code others}' (theirs win). */
    public Prices withAll(Prices others) {
        Map<String, Price> all = new LinkedHashMap<>(byModel);
        all.putAll(others.byModel);
        return new Prices(all);
    }

    /** True when no model has a price. */
    public boolean isEmpty() {
        return byModel.isEmpty();
    }

    /** The model's price, if it has one (a job that names no model, null, has none). */
    public Optional<Price> price(String model) {
        return model == null ? Optional.empty() : Optional.ofNullable(byModel.get(model));
    }

    /** What {@code usage} of {@code model} costs in USD, if the model has a price. */
    public Optional<Double> cost(String model, Usage usage) {
        return price(model).map(p -> p.cost(usage));
    }

    /**
     * What a job's answers cost in USD, summed over the records that report usage; 0 when the
     * job's model has no price. Any thread.
     */
    public double cost(Job job, JobOutcome outcome) {
        Optional<Price> price = price(job.model());
        if (price.isEmpty()) {
            return 0;
        }
        double usd = 0;
        for (ResponseRecord r : outcome.records()) {
            if (r.usage() != null) {
                usd += price.get().cost(r.usage());
            }
        }
        return usd;
    }

    /** The models among {@code models} without a price, in their order. */
    public List<String> unpriced(Collection<String> models) {
        return models.stream().filter(m -> price(m).isEmpty()).distinct().toList();
    }

    @Override
    public String toString() {
        return byModel.toString();
    }
}
