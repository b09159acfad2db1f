package dev.panoptes.eval.http;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate for 127.0.0.1 made at test time with the JDK's {@code keytool} (self-signed, EC,
 * valid for a day), and the TLS contexts of a server presenting it and of a client trusting it.
 * Made once per JVM: keytool takes about a second.
 */
final class TestTls {
    private static final char[] PASSWORD = "test-only".toCharArray();
    private static TestTls instance;

    final SSLContext server;
    final SSLContext trustingClient;

    private TestTls(KeyStore keys) throws GeneralSecurityException {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, PASSWORD);
        server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);

        KeyStore trusted = KeyStore.getInstance("PKCS12");
        try {
            trusted.load(null, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        trusted.setCertificateEntry("test-server", keys.getCertificate("server"));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        trustingClient = SSLContext.getInstance("TLS");
        trustingClient.init(null, tmf.getTrustManagers(), null);
    }

    /** The certificate and contexts, made on first use. */
    static synchronized TestTls get() throws Exception {
        if (instance == null) {
            Path dir = Files.createTempDirectory("panoptes-tls");
            Path store = dir.resolve("server.p12");
            try {
                Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                        "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                        "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-validity", "1",
                        "-storetype", "PKCS12", "-keystore", store.toString(),
                        "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                        .redirectErrorStream(true).start();
                String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
                    throw new IllegalStateException("keytool failed: " + output);
                }
                KeyStore keys = KeyStore.getInstance("PKCS12");
                try (InputStream in = Files.newInputStream(store)) {
                    keys.load(in, PASSWORD);
                }
                instance = new TestTls(keys);
            } finally {
                for (Path p : List.of(store, dir)) {
                    Files.deleteIfExists(p);
                }
            }
        }
        return instance;
    }
}
