package dev.panoptes.cli;

import dev.panoptes.demo.StubModelServer;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code worker.jar stub-model}: serves the stub model API until stopped, in process. */
class StubModelCommandTest {
    @Test
    void servesTheStubModelApiUntilStoppedAndSaysWhere() throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        CompletableFuture<StubModelServer> listening = new CompletableFuture<>();
        StringWriter out = new StringWriter();
        CommandLine cmd = new CommandLine(new StubModelCommand(stop, listening::complete));
        cmd.setOut(new PrintWriter(out, true));
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Integer> exit = thread.submit(() -> cmd.execute("--listen", "127.0.0.1:0", "--latency", "1ms"));
            StubModelServer server = listening.get(10, TimeUnit.SECONDS);

            HttpResponse<String> models = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create(server.baseUrl() + "/models")).build(),
                    HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> answer = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create(server.baseUrl() + "/chat/completions"))
                            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stub-arithmetic\",\"messages\":"
                                    + "[{\"role\":\"user\",\"content\":\"What is 2 + 3? Answer with the number only.\"}]}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            stop.countDown();

            assertThat(exit.get(10, TimeUnit.SECONDS)).isZero();
            assertThat(models.body()).contains("stub-arithmetic").contains("stub-arithmetic-small");
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).contains("\"content\":\"" + StubModelServer.answer(
                    "What is 2 + 3? Answer with the number only.", "stub-arithmetic", null) + "\"");
            assertThat(out.toString()).contains("stub model API at " + server.baseUrl())
                    .contains("stopped after 1 answer");
        } finally {
            stop.countDown();
            thread.shutdownNow();
        }
    }

    @Test
    void anAddressInUseIsOneClearLine() throws Exception {
        try (StubModelServer taken = StubModelServer.start(new java.net.InetSocketAddress("127.0.0.1", 0),
                java.time.Duration.ZERO, 1)) {
            StringWriter err = new StringWriter();
            CommandLine cmd = WorkerMain.newCommandLine(java.util.Map.of(), settings -> 0);
            cmd.setErr(new PrintWriter(err, true));

            int exit = cmd.execute("stub-model", "--listen", "127.0.0.1:" + taken.baseUrl().getPort());

            assertThat(exit).isEqualTo(1);
            assertThat(err.toString()).contains("cannot listen on 127.0.0.1:" + taken.baseUrl().getPort())
                    .doesNotContain("\tat ");
        }
    }
}
