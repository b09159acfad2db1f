package dev.panoptes.control.store;

import java.util.Objects;

/**
 * Why a sitting of a run ended short of a clean pass, as the coordinator noted it: its cost
 * budget stopped it ({@link #BUDGET}, exit 7), or a gate failed it ({@link #GATE}: too many
 * failed answers, a model below the accuracy floor). Kept with the sitting
 * ({@link RunSitting#stop()}) so that a later {@code report} or {@code runs show} knows it; a
 * later sitting that ends cleanly has none, so the run's state is its last sitting's.
 *
 * <p>Immutable; any thread.
 *
 * @param cause  {@link #BUDGET} or {@link #GATE}
 * @param reason what stopped it, for people ("the answers stored cost 0.0180 USD, the budget
 *               (--max-cost) is 0.0200 USD; 20 jobs not run")
 */
public record RunStop(String cause, String reason) {
    /** The cost budget ({@code --max-cost}) stopped the run, or was exceeded. */
    public static final String BUDGET = "budget";
    /** A gate ({@code --max-error-rate}, {@code --fail-under}) failed the run. */
    public static final String GATE = "gate";

    /** @throws IllegalArgumentException when the cause is neither of the two */
    public RunStop {
        Objects.requireNonNull(reason, "reason");
        if (!BUDGET.equals(cause) && !GATE.equals(cause)) {
            throw new IllegalArgumentException("a run stops by '" + BUDGET + "' or '" + GATE + "', not '" + cause
                    + "'");
        }
    }
}
