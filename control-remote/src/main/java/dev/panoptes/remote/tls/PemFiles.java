package dev.panoptes.remote.tls;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;

/**
 * Reads TLS material from PEM files with the JDK alone ({@link CertificateFactory},
 * {@link KeyFactory}), and builds the {@link SSLContext}s of both ends of the worker protocol.
 *
 * <p>Certificates: one or more {@code -----BEGIN CERTIFICATE-----} blocks, the leaf first.
 * Private keys: unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----}), RSA, EC or EdDSA; a
 * PKCS#1 or encrypted key is refused with the {@code openssl} command that converts it.
 *
 * <p>Every problem is an {@link IllegalArgumentException} whose message names the file and says
 * what is wrong with it, in words an operator can act on. Stateless and thread-safe.
 */
public final class PemFiles {
    private static final String BEGIN_CERT = "-----BEGIN CERTIFICATE-----";
    private static final String BEGIN_KEY = "-----BEGIN PRIVATE KEY-----";
    private static final String END_KEY = "-----END PRIVATE KEY-----";
    /** A password for the in-memory key store only; it never leaves this class. */
    private static final char[] IN_MEMORY = "panoptes".toCharArray();

    private PemFiles() {
    }

    /**
     * The certificates of a PEM file, in file order (a chain: the leaf first).
     *
     * @param what what the file is for, named in errors ("--tls-cert")
     * @throws IllegalArgumentException when the file is missing, unreadable, holds no PEM
     *                                  certificate or a malformed one
     */
    public static List<X509Certificate> readCertificates(Path file, String what) {
        String text = read(file, what);
        if (!text.contains(BEGIN_CERT)) {
            throw new IllegalArgumentException(what + " file " + file + " is not a PEM certificate: it has no '"
                    + BEGIN_CERT + "' line");
        }
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            Collection<? extends Certificate> read = factory.generateCertificates(
                    new ByteArrayInputStream(text.getBytes(StandardCharsets.ISO_8859_1)));
            List<X509Certificate> certs = new ArrayList<>();
            for (Certificate c : read) {
                certs.add((X509Certificate) c);
            }
            if (certs.isEmpty()) {
                throw new IllegalArgumentException(what + " file " + file + " holds no certificate");
            }
            return certs;
        } catch (CertificateException e) {
            throw new IllegalArgumentException(what + " file " + file + " holds a malformed certificate: "
                    + e.getMessage(), e);
        }
    }

    /**
     * The unencrypted PKCS#8 private key of a PEM file.
     *
     * @throws IllegalArgumentException when the file is missing, not a PKCS#8 PEM key, encrypted,
     *                                  or of a key type the JDK does not know
     */
    public static PrivateKey readPrivateKey(Path file, String what) {
        String text = read(file, what);
        int begin = text.indexOf(BEGIN_KEY);
        if (begin < 0) {
            if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
                throw new IllegalArgumentException(what + " file " + file + " holds an encrypted key; decrypt it:"
                        + " openssl pkcs8 -in " + file + " -out key.pem");
            }
            if (text.contains("-----BEGIN RSA PRIVATE KEY-----") || text.contains("-----BEGIN EC PRIVATE KEY-----")) {
                throw new IllegalArgumentException(what + " file " + file + " holds a PKCS#1/SEC1 key; convert it to"
                        + " PKCS#8: openssl pkcs8 -topk8 -nocrypt -in " + file + " -out key.pem");
            }
            throw new IllegalArgumentException(what + " file " + file + " is not a PEM private key: it has no '"
                    + BEGIN_KEY + "' line");
        }
        int end = text.indexOf(END_KEY, begin);
        if (end < 0) {
            throw new IllegalArgumentException(what + " file " + file + " has no '" + END_KEY + "' line");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(text.substring(begin + BEGIN_KEY.length(), end));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " file " + file + " is not valid base64: " + e.getMessage(), e);
        }
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                // Not this algorithm: try the next.
            }
        }
        throw new IllegalArgumentException(what + " file " + file + " holds a PKCS#8 key that is neither RSA, EC"
                + " nor EdDSA, or is malformed");
    }

    /**
     * Checks that {@code key} is the private key of {@code cert}, by signing and verifying.
     *
     * @throws IllegalArgumentException when it is not, naming both files
     */
    public static void requireMatch(X509Certificate cert, PrivateKey key, Path certFile, Path keyFile) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "RSASSA-PSS" -> "RSASSA-PSS";
            default -> key.getAlgorithm(); // Ed25519, Ed448, EdDSA
        };
        boolean matches;
        try {
            byte[] nonce = new byte[32];
            new SecureRandom().nextBytes(nonce);
            Signature signer = Signature.getInstance(algorithm);
            if ("RSASSA-PSS".equals(algorithm)) {
                signer.setParameter(new java.security.spec.PSSParameterSpec("SHA-256", "MGF1",
                        java.security.spec.MGF1ParameterSpec.SHA256, 32, 1));
            }
            signer.initSign(key);
            signer.update(nonce);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            if ("RSASSA-PSS".equals(algorithm)) {
                verifier.setParameter(new java.security.spec.PSSParameterSpec("SHA-256", "MGF1",
                        java.security.spec.MGF1ParameterSpec.SHA256, 32, 1));
            }
            verifier.initVerify(cert.getPublicKey());
            verifier.update(nonce);
            matches = verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false;
        }
        if (!matches) {
            throw new IllegalArgumentException("the private key in " + keyFile + " does not match the certificate in "
                    + certFile + " (" + cert.getSubjectX500Principal().getName() + "); give the key the certificate"
                    + " was issued for");
        }
    }

    /**
     * A server's context: its certificate chain and key, and, for mutual TLS, the CA whose
     * certificates clients must present (null for none).
     *
     * @throws IllegalArgumentException as the readers above, or when the key does not match
     */
    public static SSLContext serverContext(Path certChain, Path privateKey, Path clientCa) {
        List<X509Certificate> chain = readCertificates(certChain, "TLS certificate");
        PrivateKey key = readPrivateKey(privateKey, "TLS private key");
        requireMatch(chain.get(0), key, certChain, privateKey);
        List<X509Certificate> trusted = clientCa == null ? null : readCertificates(clientCa, "TLS client CA");
        return context(chain, key, trusted);
    }

    /**
     * A client's context: trusting the CA certificates of {@code ca} (null: the JVM's default
     * trust store), presenting {@code certChain} with {@code privateKey} when both are given.
     *
     * @throws IllegalArgumentException as the readers above, or when only one of cert and key is given
     */
    public static SSLContext clientContext(Path ca, Path certChain, Path privateKey) {
        if ((certChain == null) != (privateKey == null)) {
            throw new IllegalArgumentException("a client certificate needs both its certificate and its private key"
                    + " (got " + (certChain == null ? "a key only" : "a certificate only") + ")");
        }
        List<X509Certificate> trusted = ca == null ? null : readCertificates(ca, "TLS CA");
        List<X509Certificate> chain = null;
        PrivateKey key = null;
        if (certChain != null) {
            chain = readCertificates(certChain, "TLS certificate");
            key = readPrivateKey(privateKey, "TLS private key");
            requireMatch(chain.get(0), key, certChain, privateKey);
        }
        return context(chain, key, trusted);
    }

    /**
     * A TLS context from material already in memory.
     *
     * @param chain   this end's certificate chain, or null to present none
     * @param key     its private key, or null
     * @param trusted the CA certificates to trust, or null for the JVM's default trust store
     */
    public static SSLContext context(List<X509Certificate> chain, PrivateKey key, List<X509Certificate> trusted) {
        try {
            KeyManagerFactory kmf = null;
            if (chain != null) {
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry("key", key, IN_MEMORY, chain.toArray(new X509Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, IN_MEMORY);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (trusted != null) {
                KeyStore roots = KeyStore.getInstance("PKCS12");
                roots.load(null, null);
                for (int i = 0; i < trusted.size(); i++) {
                    roots.setCertificateEntry("ca-" + i, trusted.get(i));
                }
                tmf.init(roots);
            } else {
                tmf.init((KeyStore) null);
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot build a TLS context: " + e, e);
        }
    }

    private static String read(Path file, String what) {
        try {
            // Latin-1 maps every byte: a binary (DER) file is then reported as "not PEM", not as unreadable.
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(what + " file " + file + " does not exist", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + what + " file " + file + ": " + e, e);
        }
    }
}
