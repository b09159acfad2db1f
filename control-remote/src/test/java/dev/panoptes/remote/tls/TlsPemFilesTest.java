package dev.panoptes.remote.tls;

import dev.panoptes.remote.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** PEM files in, TLS contexts out; and every way a file can be wrong, named with the file. */
class TlsPemFilesTest {
    private static final TestCertificates CERTS = TestCertificates.create();

    @TempDir
    Path dir;

    @Test
    void readsACertificateChainAndItsPkcs8KeyIntoServerOptions() {
        Path cert = TestCertificates.writePem(dir, "server", CERTS.server);
        Path ca = TestCertificates.writePem(dir, "ca", CERTS.ca);

        ServerOptions options = ServerOptions.builder().tls(cert, dir.resolve("server.key"), ca).build();

        assertThat(options.tls()).isTrue();
        assertThat(options.requireClientCertificate()).isTrue();
        assertThat(options.toString()).contains("tls=mutual");
        assertThat(PemFiles.readCertificates(cert, "cert").get(0)).isEqualTo(CERTS.server.cert());
        assertThat(PemFiles.readPrivateKey(dir.resolve("server.key"), "key")).isEqualTo(CERTS.server.key());
    }

    @Test
    void refusesAKeyThatDoesNotMatchTheCertificate() {
        Path cert = TestCertificates.writePem(dir, "server", CERTS.server);
        TestCertificates.writePem(dir, "client", CERTS.client);

        assertThatThrownBy(() -> PemFiles.serverContext(cert, dir.resolve("client.key"), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("client.key does not match the certificate in")
                .hasMessageContaining("server.crt");
    }

    @Test
    void namesAMissingFileAndAFileThatIsNotPem() throws IOException {
        Path notPem = Files.writeString(dir.resolve("cert.txt"), "hello");

        assertThatThrownBy(() -> PemFiles.readCertificates(dir.resolve("nope.crt"), "--tls-cert"))
                .hasMessage("--tls-cert file " + dir.resolve("nope.crt") + " does not exist");
        assertThatThrownBy(() -> PemFiles.readCertificates(notPem, "--tls-cert"))
                .hasMessageContaining("is not a PEM certificate");
        assertThatThrownBy(() -> PemFiles.readPrivateKey(notPem, "--tls-key"))
                .hasMessageContaining("is not a PEM private key");
    }

    @Test
    void explainsHowToConvertAPkcs1Key() throws IOException {
        Path pkcs1 = Files.writeString(dir.resolve("rsa.key"), "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n"
                + "-----END RSA PRIVATE KEY-----\n");

        assertThatThrownBy(() -> PemFiles.readPrivateKey(pkcs1, "--tls-key"))
                .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
    }

    @Test
    void aClientCertificateNeedsItsKey() {
        Path ca = TestCertificates.writePem(dir, "ca", CERTS.ca);
        Path cert = TestCertificates.writePem(dir, "client", CERTS.client);

        assertThatThrownBy(() -> PemFiles.clientContext(ca, cert, null))
                .hasMessageContaining("needs both its certificate and its private key");
        assertThat(PemFiles.clientContext(ca, cert, dir.resolve("client.key")).getProtocol()).isEqualTo("TLS");
    }
}
