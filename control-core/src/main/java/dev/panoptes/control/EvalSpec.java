package dev.panoptes.control;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What one job evaluates: a named list of vignettes and the model parameters to use for them.
 *
 * @param name      the suite's name, for humans
 * @param vignettes at least one, with distinct ids; unmodifiable
 * @param params    never null ({@link SpecParams#NONE} when absent)
 */
public record EvalSpec(String name, List<Vignette> vignettes, SpecParams params) {
    /** @throws IllegalArgumentException when there are no vignettes or two share an id */
    public EvalSpec {
        Checks.notNull(name, "spec name");
        Checks.notNull(vignettes, "vignettes of spec '" + name + "'");
        if (vignettes.isEmpty()) {
            throw new IllegalArgumentException("spec '" + name + "' must have at least one vignette");
        }
        vignettes = List.copyOf(vignettes);
        Set<String> seen = new HashSet<>();
        for (Vignette v : vignettes) {
            if (!seen.add(v.id())) {
                throw new IllegalArgumentException(
                        "spec '" + name + "' has vignette id '" + v.id() + "' more than once");
            }
        }
        params = params == null ? SpecParams.NONE : params;
    }

    /** A spec without model parameters. */
    public EvalSpec(String name, List<Vignette> vignettes) {
        this(name, vignettes, SpecParams.NONE);
    }
}
