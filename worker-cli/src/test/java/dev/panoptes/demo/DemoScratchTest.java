package dev.panoptes.demo;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The demo's temporary folder goes when the demo ends, however it ends (DemoIT covers SIGTERM). */
class DemoScratchTest {
    @Test
    void aDemoThatFailsLeavesNoFolderBehindAndTheHookIsNotNeeded() throws Exception {
        AtomicInteger stops = new AtomicInteger();
        Path[] dir = new Path[1];
        assertThatThrownBy(() -> {
            try (DemoScratch scratch = DemoScratch.create(stops::incrementAndGet)) {
                dir[0] = scratch.dir();
                Files.writeString(Files.createDirectories(scratch.dir().resolve("logs")).resolve("w.log"), "x");
                Files.writeString(scratch.dir().resolve("demo.db"), "y");
                throw new IllegalStateException("the demo failed");
            }
        }).hasMessage("the demo failed");

        assertThat(dir[0].getFileName().toString()).startsWith(DemoScratch.PREFIX);
        assertThat(dir[0]).doesNotExist();
        assertThat(stops).as("stopFirst is the shutdown hook's, not close()'s").hasValue(0);
    }

    @Test
    void closingTwiceIsHarmless() throws Exception {
        DemoScratch scratch = DemoScratch.create(() -> { });
        scratch.close();
        scratch.close();
        assertThat(scratch.dir()).doesNotExist();
    }
}
