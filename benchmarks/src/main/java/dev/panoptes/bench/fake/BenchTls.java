package dev.panoptes.bench.fake;

import dev.panoptes.remote.tls.PemFiles;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * TLS for the dispatch benchmarks' TLS row: a self-signed EC certificate for 127.0.0.1, made once
 * per run with the JDK's keytool, and the contexts both children build from it. The children find
 * the key store through the system property {@value #PROPERTY}; without it they speak plaintext.
 */
public final class BenchTls {
    public static final String PROPERTY = "panoptes.bench.tls";
    private static final String ALIAS = "bench";
    private static final char[] PASSWORD = "panoptes".toCharArray();

    private BenchTls() {
    }

    /** Makes the key store (EC P-256, SAN 127.0.0.1 and localhost) in {@code dir} with keytool. */
    public static Path createKeyStore(Path dir) throws IOException, InterruptedException {
        Path store = dir.resolve("bench-tls.p12");
        Files.deleteIfExists(store);
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", ALIAS, "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass",
                new String(PASSWORD)).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool failed to make the benchmark's TLS certificate: " + output);
        }
        return store;
    }

    /** The coordinator's context from the property's key store; null without the property. */
    public static SSLContext serverContext() {
        KeyStore store = load();
        if (store == null) {
            return null;
        }
        try {
            PrivateKey key = (PrivateKey) store.getKey(ALIAS, PASSWORD);
            return PemFiles.context(List.of((X509Certificate) store.getCertificate(ALIAS)), key, null);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the benchmark's TLS key", e);
        }
    }

    /** The worker's context, trusting the self-signed certificate; null without the property. */
    public static SSLContext clientContext() {
        KeyStore store = load();
        if (store == null) {
            return null;
        }
        try {
            return PemFiles.context(null, null, List.of((X509Certificate) store.getCertificate(ALIAS)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the benchmark's TLS certificate", e);
        }
    }

    private static KeyStore load() {
        String path = System.getProperty(PROPERTY);
        if (path == null) {
            return null;
        }
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, PASSWORD);
            return store;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot load the benchmark's TLS key store " + path, e);
        }
    }
}
