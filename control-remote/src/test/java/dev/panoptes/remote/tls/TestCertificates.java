package dev.panoptes.remote.tls;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Certificates made at test time (EC P-256, milliseconds each): a CA, a server certificate for
 * 127.0.0.1 and localhost, an expired one, one for another host, a second CA with a server
 * certificate of its own, and a client certificate (CN=worker-1) for mutual TLS. Each test class
 * makes its own set; nothing is shared between tests through files.
 */
public final class TestCertificates {
    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    /** A certificate with its key. */
    public record Issued(X509Certificate cert, PrivateKey key) {
        public List<X509Certificate> chain() {
            return List.of(cert);
        }
    }

    public final Issued ca;
    public final Issued server;
    public final Issued expiredServer;
    public final Issued wrongHostServer;
    public final Issued foreignCa;
    public final Issued foreignServer;
    public final Issued client;
    public final Issued foreignClient;

    private TestCertificates() {
        Instant now = Instant.now();
        Instant from = now.minus(Duration.ofDays(1));
        Instant until = now.plus(Duration.ofDays(1));
        ca = issueCa("Panoptes Test CA", from, until);
        server = issue(ca, "coordinator", from, until, true, List.of("127.0.0.1", "localhost"));
        expiredServer = issue(ca, "coordinator-expired", now.minus(Duration.ofDays(3)), now.minus(Duration.ofHours(1)),
                true, List.of("127.0.0.1", "localhost"));
        wrongHostServer = issue(ca, "elsewhere", from, until, true, List.of("coordinator.example.com"));
        foreignCa = issueCa("Some Other CA", from, until);
        foreignServer = issue(foreignCa, "coordinator", from, until, true, List.of("127.0.0.1", "localhost"));
        client = issue(ca, "worker-1", from, until, false, List.of());
        foreignClient = issue(foreignCa, "intruder", from, until, false, List.of());
    }

    public static TestCertificates create() {
        return new TestCertificates();
    }

    /** A server context presenting {@code server}; trusting {@code ca}'s clients when it is not null. */
    /** The first flight of a TLS client of {@code context}, as bytes: what a peer that then goes silent sends. */
    public static byte[] clientHello(SSLContext context) throws javax.net.ssl.SSLException {
        javax.net.ssl.SSLEngine engine = context.createSSLEngine("127.0.0.1", 1);
        engine.setUseClientMode(true);
        engine.beginHandshake();
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(java.nio.ByteBuffer.allocate(0), out);
        out.flip();
        byte[] bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }

    public static SSLContext serverContext(Issued server, Issued clientCa) {
        return PemFiles.context(server.chain(), server.key(), clientCa == null ? null : clientCa.chain());
    }

    /** A client context trusting {@code ca}, presenting {@code client} when it is not null. */
    public static SSLContext clientContext(Issued ca, Issued client) {
        return PemFiles.context(client == null ? null : client.chain(), client == null ? null : client.key(),
                ca.chain());
    }

    /** Writes {@code name}.crt and {@code name}.key (PKCS#8) in {@code dir}; returns the certificate's path. */
    public static Path writePem(Path dir, String name, Issued issued) {
        try {
            Path cert = dir.resolve(name + ".crt");
            Files.writeString(cert, pem("CERTIFICATE", issued.cert().getEncoded()), StandardCharsets.US_ASCII);
            Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", issued.key().getEncoded()),
                    StandardCharsets.US_ASCII);
            return cert;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[]{'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static Issued issueCa(String name, Instant from, Instant until) {
        KeyPair keys = keyPair();
        X500Name subject = new X500Name("CN=" + name);
        try {
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(from),
                    Date.from(until), subject, keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            return new Issued(sign(b, keys.getPrivate()), keys.getPrivate());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Issued issue(Issued issuer, String cn, Instant from, Instant until, boolean serverCert,
                                List<String> hosts) {
        KeyPair keys = keyPair();
        try {
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer.cert(), serial(), Date.from(from),
                    Date.from(until), new X500Name("CN=" + cn), keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(
                            serverCert ? KeyPurposeId.id_kp_serverAuth : KeyPurposeId.id_kp_clientAuth));
            if (!hosts.isEmpty()) {
                List<GeneralName> names = new ArrayList<>();
                for (String host : hosts) {
                    names.add(host.matches("[0-9.]+") ? new GeneralName(GeneralName.iPAddress, host)
                            : new GeneralName(GeneralName.dNSName, host));
                }
                b.addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(names.toArray(new GeneralName[0])));
            }
            return new Issued(sign(b, issuer.key()), keys.getPrivate());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey) {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
        } catch (OperatorCreationException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a test certificate", e);
        }
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIALS.incrementAndGet());
    }
}
