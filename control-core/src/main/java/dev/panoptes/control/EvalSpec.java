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
        if (vignettes == null) {
            // The message is made only when thrown: a plan makes a spec per job, a million per run.
            throw new NullPointerException("vignettes of spec '" + name + "' must not be null");
        }
        if (vignettes.isEmpty()) {
            throw new IllegalArgumentException("spec '" + name + "' must have at least one vignette");
        }
        vignettes = List.copyOf(vignettes);
        String duplicate = firstDuplicateId(vignettes);
        if (duplicate != null) {
            throw new IllegalArgumentException("spec '" + name + "' has vignette id '" + duplicate + "' more than once");
        }
        params = params == null ? SpecParams.NONE : params;
    }

    /**
     * Jobs hold a handful of vignettes and a large suite makes hundreds of thousands of them, so
     * small lists are checked pairwise, without allocating a set.
     */
    private static String firstDuplicateId(List<Vignette> vignettes) {
        int n = vignettes.size();
        if (n <= 16) {
            for (int i = 1; i < n; i++) {
                String id = vignettes.get(i).id();
                for (int j = 0; j < i; j++) {
                    if (vignettes.get(j).id().equals(id)) {
                        return id;
                    }
                }
            }
            return null;
        }
        Set<String> seen = new HashSet<>();
        for (Vignette v : vignettes) {
            if (!seen.add(v.id())) {
                return v.id();
            }
        }
        return null;
    }

    /** A spec without model parameters. */
    public EvalSpec(String name, List<Vignette> vignettes) {
        this(name, vignettes, SpecParams.NONE);
    }
}
