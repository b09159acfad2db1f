/**
 * Sandboxes for the commands of tool-using samples, on bubblewrap, without Docker: each sample
 * gets a fresh {@link dev.panoptes.eval.sandbox.Sandbox} with no network, a read-only system, an
 * empty environment, its own PID/IPC/UTS/user namespaces and an in-memory work folder of bounded
 * size, and limits on wall time per command, memory, processes and output
 * ({@link dev.panoptes.eval.sandbox.SandboxLimits}). {@link dev.panoptes.eval.sandbox.Sandboxes}
 * bounds how many run at once and fails closed: a worker that cannot build one says so and runs
 * nothing unsandboxed. Everything here blocks; none of it belongs on a selector thread.
 */
package dev.panoptes.eval.sandbox;
