/**
 * The measurements that run the real product binary's coordinator command: end to end against the
 * stub model, the rate limit, the million-vignette suite, and the result store's write rate.
 */
package dev.panoptes.bench.fleet;
