/**
 * Measurements 2 to 4, which run the product's worker server in a coordinator JVM of their own:
 * connection scale (many heartbeating workers), failure detection (kill and stop a worker) and
 * scheduling (makespan over workers of unequal speed).
 */
package dev.panoptes.bench.cluster;
