/**
 * What a run costs: token prices per model ({@link dev.panoptes.control.cost.Prices}) and a budget
 * that stops a run's dispatching once the answers stored have cost it
 * ({@link dev.panoptes.control.cost.CostBudget}), through the scheduler's gate, listener and
 * worker-source seams.
 */
package dev.panoptes.control.cost;
