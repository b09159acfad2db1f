package dev.panoptes.demo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The demo's temporary folder ({@code panoptes-demo-*} in {@code java.io.tmpdir}: its copy of the
 * suite, the worker processes' logs and, without {@code --db}, its database), removed when the
 * demo ends: by {@link #close()} when it ends normally or with an error, by a shutdown hook on
 * Ctrl-C or SIGTERM. The hook first runs {@code stopFirst} (stopping the worker processes, which
 * write into the folder), then waits a little for the demo's own thread, which goes on after an
 * interrupt (it stores what it has and writes the report), to call {@link #close()}: removing the
 * folder under it would race its last writes there.
 *
 * <p>{@link #close()} runs on the demo's thread, the hook on the JVM's; removal happens once, and
 * the hook returns only once it is done (the JVM halts when its hooks return).
 */
public final class DemoScratch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DemoScratch.class);
    static final String PREFIX = "panoptes-demo-";

    private final Path dir;
    private final Runnable stopFirst;
    private final Thread hook;
    /** Guarded by this: the hook must not return (and let the JVM halt) while close() is still removing. */
    private boolean removed;
    /** Counted down by {@link #close()}: the demo's thread is done with the folder. */
    private final CountDownLatch closed = new CountDownLatch(1);

    private DemoScratch(Path dir, Runnable stopFirst) {
        this.dir = dir;
        this.stopFirst = stopFirst;
        this.hook = new Thread(this::stopAndRemove, "demo-cleanup");
    }

    /**
     * Creates the folder and arms its removal.
     *
     * @param stopFirst what the shutdown hook runs before removing the folder; must not block for long
     * @throws IOException when the folder cannot be created
     */
    public static DemoScratch create(Runnable stopFirst) throws IOException {
        DemoScratch scratch = new DemoScratch(Files.createTempDirectory(PREFIX), stopFirst);
        Runtime.getRuntime().addShutdownHook(scratch.hook);
        return scratch;
    }

    /** The folder. */
    public Path dir() {
        return dir;
    }

    /** Removes the folder and everything in it, and disarms the hook; idempotent. */
    @Override
    public void close() {
        closed.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // The JVM is shutting down: the hook runs (or ran) the removal.
        }
        remove();
    }

    private void stopAndRemove() {
        try {
            stopFirst.run();
            if (!closed.await(10, TimeUnit.SECONDS)) {
                log.debug("demo: its thread did not finish within 10 s of the shutdown; removing {} anyway", dir);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            remove();
        }
    }

    private synchronized void remove() {
        if (removed) {
            return;
        }
        removed = true;
        try {
            deleteTree(dir);
        } catch (IOException | UncheckedIOException e) {
            // A worker still writing its log can leave a file behind; once more, then give up saying where.
            try {
                deleteTree(dir);
            } catch (IOException | UncheckedIOException again) {
                log.warn("demo: could not remove its temporary folder {}: {}", dir, again.getMessage());
            }
        }
    }

    /** Deletes {@code root} and what it holds; a file already gone is no failure. */
    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(root)) {
            paths = walk.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : paths) {
            try {
                Files.deleteIfExists(p);
            } catch (NoSuchFileException e) {
                // Gone meanwhile.
            } catch (DirectoryNotEmptyException e) {
                throw new IOException("a file appeared in " + p + " while it was being removed", e);
            }
        }
    }
}
