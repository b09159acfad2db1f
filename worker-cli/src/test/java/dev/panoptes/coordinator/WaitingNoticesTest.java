package dev.panoptes.coordinator;

import dev.panoptes.control.WorkerSet;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class WaitingNoticesTest {
    @Test
    void sayWhereWorkersShouldPointAndWhichModelTheyMustServe() {
        StringWriter text = new StringWriter();
        ProgressPrinter printer = new ProgressPrinter(new PrintWriter(text, true), false, new WorkerSet());
        WaitingNotices notices = new WaitingNotices(printer, new FleetReporter(printer),
                new InetSocketAddress("127.0.0.1", 7070));

        notices.onWaitingForWorkers(Duration.ofSeconds(30));
        notices.onNoWorkerServes(Duration.ofSeconds(60), Set.of("llama"), List.of());
        printer.finish();

        assertThat(text.toString().lines()).startsWith(
                "no worker connected for 30 s; are workers pointed at 127.0.0.1:7070?",
                "no connected worker serves " + RunLines.describe(Set.of("llama"))
                        + " for 60 s; start workers whose model API serves it (connected: 0)");
    }
}
