package dev.panoptes.control;

import dev.panoptes.control.local.LocalWorker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class WorkerSetTest {
    private final List<LocalWorker> workers = new ArrayList<>();

    @AfterEach
    void close() {
        workers.forEach(LocalWorker::close);
    }

    @Test
    void membershipIsByIdentitySoTwoHandlesWithOneIdAreTwoMembers() {
        WorkerSet set = new WorkerSet();
        LocalWorker first = worker("same-id");
        LocalWorker second = worker("same-id");
        assertThat(set.add(first)).isTrue();
        assertThat(set.add(second)).isTrue();
        assertThat(set.add(first)).isFalse();
        assertThat(set.size()).isEqualTo(2);

        assertThat(set.remove(first)).isTrue();
        assertThat(set.remove(first)).isFalse();
        assertThat(set.snapshot()).containsExactly(second);
    }

    @Test
    void aSnapshotIsImmutableAndUnchangedByLaterChanges() {
        WorkerSet set = new WorkerSet();
        LocalWorker a = worker("a");
        set.add(a);
        List<WorkerHandle> before = set.snapshot();
        set.add(worker("b"));
        set.remove(a);

        assertThat(before).containsExactly(a);
        assertThat(set.snapshot()).extracting(WorkerHandle::id).containsExactly("b");
        assertThat(set.snapshot()).isSameAs(set.snapshot());
        assertThat(set.totalCapacity()).isEqualTo(2);
    }

    @Test
    void listenersHearEveryChangeButNotTheNoOps() {
        WorkerSet set = new WorkerSet();
        AtomicInteger changes = new AtomicInteger();
        Runnable listener = changes::incrementAndGet;
        set.addListener(listener);
        LocalWorker a = worker("a");
        set.add(a);
        set.add(a);
        set.remove(a);
        set.remove(a);
        set.removeListener(listener);
        set.add(a);

        assertThat(changes.get()).isEqualTo(2);
    }

    @Test
    void thousandsOfMembersJoinAndLeaveInOrder() {
        WorkerSet set = new WorkerSet();
        List<LocalWorker> many = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            // A pool's threads start with its first job, and none is dispatched: thousands are cheap.
            many.add(new LocalWorker("w" + i, 1, TestJobs.echoRunner()));
        }
        many.forEach(set::add);
        for (int i = 0; i < many.size(); i += 2) {
            set.remove(many.get(i));
        }
        assertThat(set.size()).isEqualTo(1000);
        assertThat(set.snapshot().get(0).id()).isEqualTo("w1");
        assertThat(set.snapshot().get(999).id()).isEqualTo("w1999");
    }

    private LocalWorker worker(String id) {
        LocalWorker w = new LocalWorker(id, 2, TestJobs.echoRunner());
        workers.add(w);
        return w;
    }
}
