package dev.panoptes.bench;

import dev.panoptes.bench.fake.FastFakeWorker;

/**
 * The stable entry point of the minimal fast fake worker,
 * {@code java -cp benchmarks.jar dev.panoptes.bench.FakeWorker port workerId capacity heartbeatMs
 * connectRetryMs [models]}: harnesses outside this module launch it by this name, so it stays here
 * while the worker itself, {@link FastFakeWorker}, lives with the other stand-ins.
 */
public final class FakeWorker {
    private FakeWorker() {
    }

    public static void main(String[] args) {
        FastFakeWorker.main(args);
    }
}
