package dev.panoptes.bench.harness;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How the end-to-end and suite measurements start the product itself: {@code java -jar worker.jar
 * ...} as a user would, with the built {@code worker-cli/target/worker.jar} when it exists, or
 * else the same {@code WorkerMain} from this jar (which embeds worker-cli).
 */
public final class ProductCli {
    private final Path workerJar;

    public ProductCli(Path workerJar) {
        this.workerJar = workerJar;
    }

    /** Says which binary runs, so that a report names it. */
    public String describe() {
        return Files.isRegularFile(workerJar) ? workerJar.toString()
                : "dev.panoptes.cli.WorkerMain from " + System.getProperty("java.class.path")
                        + " (" + workerJar + " not built)";
    }

    /**
     * {@code java <jvmArgs> -jar worker.jar <args>}, under coreutils {@code timeout} when it is
     * installed: a worker process reconnects forever by design, so if this harness dies without
     * closing it, the timeout still ends it (15 minutes, then SIGKILL 10 s later).
     */
    public List<String> command(List<String> jvmArgs, List<String> args) {
        List<String> command = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/timeout"))) {
            command.addAll(List.of("/usr/bin/timeout", "--kill-after=10", "900"));
        }
        command.add(Child.javaExecutable());
        command.add("-Djava.net.preferIPv4Stack=true");
        command.addAll(jvmArgs);
        if (Files.isRegularFile(workerJar)) {
            command.add("-jar");
            command.add(workerJar.toString());
        } else {
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add("dev.panoptes.cli.WorkerMain");
        }
        command.addAll(args);
        return command;
    }

    /** A loopback port free right now (bound and released), for a coordinator told where to listen. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    /**
     * True once something listens on 127.0.0.1:port, read from /proc/net/tcp so that checking
     * does not itself open a connection (which the coordinator would count as a failed handshake).
     */
    public static boolean isListening(int port) {
        String local = String.format(Locale.ROOT, "0100007F:%04X", port);
        try {
            for (String line : Files.readAllLines(Path.of("/proc/net/tcp"))) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && f[1].equals(local) && f[3].equals("0A")) {
                    return true;
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /** Waits until the port listens. @throws IllegalStateException after the timeout */
    public static void awaitListening(int port, long timeoutMs, Child owner) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (!isListening(port)) {
            if (!owner.isAlive()) {
                throw new IllegalStateException(owner.name() + " exited (code " + owner.process().exitValue()
                        + ") before listening on port " + port + "; see its log");
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(owner.name() + " did not listen on port " + port + " within "
                        + timeoutMs + " ms");
            }
            Thread.sleep(5);
        }
    }
}
