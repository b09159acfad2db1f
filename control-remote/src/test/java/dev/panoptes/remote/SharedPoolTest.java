package dev.panoptes.remote;

import dev.panoptes.control.TestJobs;
import dev.panoptes.control.local.LocalWorker;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class SharedPoolTest {

    @Test
    void membersAreHandlesByIdentityAndRemovalTakesOutExactlyThatOne() {
        SharedPool pool = new SharedPool();
        AtomicInteger changes = new AtomicInteger();
        pool.addListener(changes::incrementAndGet);
        try (LocalWorker a = new LocalWorker("same", 1, TestJobs.echoRunner());
             LocalWorker b = new LocalWorker("same", 1, TestJobs.echoRunner())) {
            assertThat(pool.add(a)).isTrue();
            assertThat(pool.add(b)).isTrue();
            assertThat(pool.add(a)).isFalse();
            assertThat(pool.size()).isEqualTo(2);

            assertThat(pool.remove(a)).isTrue();

            assertThat(pool.snapshot()).containsExactly(b);
            assertThat(pool.remove(a)).isFalse();
            assertThat(pool.isEmpty()).isFalse();
            assertThat(changes.get()).isEqualTo(3);
        }
    }
}
