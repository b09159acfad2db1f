package dev.panoptes.control;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a hand-off batch promises its senders and receivers. */
class HandOffBatchTest {
    private final List<List<String>> deliveries = new ArrayList<>();
    private final HandOffBatch.Receiver<String> receiver = items -> deliveries.add(List.copyOf(items));

    @Test
    void withoutABatchEachItemIsDeliveredAtOnceAndNoWakeIsHeld() {
        HandOffBatch.send(receiver, "a");
        HandOffBatch.send(receiver, "b");
        assertThat(deliveries).containsExactly(List.of("a"), List.of("b"));
        assertThat(HandOffBatch.deferWake(() -> { })).isFalse();
        assertThat(HandOffBatch.isOpen()).isFalse();
    }

    @Test
    void insideABatchItemsWaitAndArriveTogetherInOrderThenTheWakesOnceEach() {
        List<String> log = new ArrayList<>();
        HandOffBatch.Receiver<String> other = items -> log.add("other " + items);
        HandOffBatch.Receiver<String> first = items -> log.add("first " + items);
        Runnable wake = () -> log.add("wake");
        HandOffBatch batch = HandOffBatch.open();
        HandOffBatch.send(first, "a");
        assertThat(HandOffBatch.deferWake(wake)).isTrue();
        HandOffBatch.send(other, "x");
        HandOffBatch.send(first, "b");
        assertThat(HandOffBatch.deferWake(wake)).isTrue();
        HandOffBatch nested = HandOffBatch.open();
        HandOffBatch.send(first, "c");
        nested.close();
        assertThat(log).as("a nested close delivers nothing").isEmpty();
        batch.close();
        assertThat(log).containsExactly("first [a, b, c]", "other [x]", "wake");
        assertThat(HandOffBatch.isOpen()).isFalse();
    }

    @Test
    void aHostsItemsAreDeliveredOnHostOnlyWhenItsBatchIsTheOutermost() {
        List<String> log = new ArrayList<>();
        HandOffBatch.Receiver<String> asking = items -> {
            log.add(items + " on host " + HandOffBatch.deliveringOnHost());
            // A batch the receiver opens of its own delivers as no host's.
            HandOffBatch own = HandOffBatch.open();
            HandOffBatch.send(receiver, "own");
            own.close();
            log.add("after own batch, on host " + HandOffBatch.deliveringOnHost());
        };
        HandOffBatch.Receiver<String> inner = items -> log.add("inner on host " + HandOffBatch.deliveringOnHost());
        assertThat(HandOffBatch.deliveringOnHost()).isFalse();
        HandOffBatch host = HandOffBatch.openHost();
        HandOffBatch.send(asking, "a");
        assertThat(HandOffBatch.deferWake(() -> log.add("wake"))).as("a host's batch holds items only").isFalse();
        host.close();
        assertThat(log).containsExactly("[a] on host true", "after own batch, on host true");
        assertThat(HandOffBatch.deliveringOnHost()).as("only while delivering").isFalse();

        log.clear();
        HandOffBatch outer = HandOffBatch.open();
        HandOffBatch nestedHost = HandOffBatch.openHost();
        HandOffBatch.send(inner, "b");
        nestedHost.close();
        outer.close();
        assertThat(log).as("the outermost level decides").containsExactly("inner on host false");
    }

    @Test
    void aBatchForItemsHoldsItemsButWakesAtOnceUnlessAnOuterLevelHoldsWakes() {
        List<String> log = new ArrayList<>();
        HandOffBatch items = HandOffBatch.openForItems();
        HandOffBatch.send(receiver, "a");
        assertThat(HandOffBatch.deferWake(() -> log.add("wake"))).as("wakes at once").isFalse();
        items.close();
        assertThat(deliveries).containsExactly(List.of("a"));

        HandOffBatch outer = HandOffBatch.open();
        HandOffBatch inner = HandOffBatch.openForItems();
        assertThat(HandOffBatch.deferWake(() -> log.add("held"))).as("the outer level holds it").isTrue();
        inner.close();
        assertThat(HandOffBatch.deferWake(() -> log.add("held too"))).isTrue();
        assertThat(log).isEmpty();
        outer.close();
        assertThat(log).containsExactly("held", "held too");
        HandOffBatch after = HandOffBatch.openForItems();
        assertThat(HandOffBatch.deferWake(() -> { })).as("nothing left holding wakes").isFalse();
        after.close();
    }

    @Test
    void flushDeliversWhatIsHeldAndLeavesTheBatchOpen() {
        HandOffBatch batch = HandOffBatch.open();
        try {
            HandOffBatch.send(receiver, "a");
            HandOffBatch.flush();
            assertThat(deliveries).containsExactly(List.of("a"));
            HandOffBatch.send(receiver, "b");
            assertThat(deliveries).hasSize(1);
        } finally {
            batch.close();
        }
        assertThat(deliveries).containsExactly(List.of("a"), List.of("b"));
    }

    @Test
    void aReceiverThatThrowsDoesNotKeepTheOthersFromTheirItems() {
        List<String> log = new ArrayList<>();
        HandOffBatch batch = HandOffBatch.open();
        HandOffBatch.send(items -> {
            throw new IllegalStateException("broken receiver");
        }, "a");
        HandOffBatch.send(receiver, "b");
        HandOffBatch.deferWake(() -> log.add("wake"));
        assertThatThrownBy(batch::close).isInstanceOf(IllegalStateException.class).hasMessage("broken receiver");
        assertThat(deliveries).containsExactly(List.of("b"));
        assertThat(log).containsExactly("wake");
        assertThat(HandOffBatch.isOpen()).isFalse();
    }

    @Test
    void whenTwoReceiversThrowTheFirstFailureCarriesTheSecond() {
        HandOffBatch batch = HandOffBatch.open();
        HandOffBatch.send(items -> {
            throw new IllegalStateException("first");
        }, "a");
        HandOffBatch.send(items -> {
            throw new IllegalArgumentException("second");
        }, "b");
        assertThatThrownBy(batch::close).hasMessage("first")
                .satisfies(e -> assertThat(e.getSuppressed()).singleElement()
                        .isInstanceOf(IllegalArgumentException.class));
    }

    @Test
    void aBatchBelongsToItsThread() throws Exception {
        HandOffBatch batch = HandOffBatch.open();
        try {
            HandOffBatch.send(receiver, "held");
            CompletableFuture<Boolean> elsewhere = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                HandOffBatch.send(receiver, "at once");
                elsewhere.complete(HandOffBatch.isOpen());
            });
            t.start();
            assertThat(elsewhere.get()).isFalse();
            t.join();
            assertThat(deliveries).containsExactly(List.of("at once"));
            CompletableFuture<Throwable> refused = new CompletableFuture<>();
            Thread closer = new Thread(() -> {
                try {
                    batch.close();
                    refused.complete(null);
                } catch (RuntimeException e) {
                    refused.complete(e);
                }
            });
            closer.start();
            assertThat(refused.get()).as("closed on another thread").isInstanceOf(IllegalStateException.class);
            closer.join();
        } finally {
            batch.close();
        }
        assertThat(deliveries).containsExactly(List.of("at once"), List.of("held"));
    }
}
