package io.loopcsi.transfer.tls;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HexFormat;

import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A node process' transfer identity on the wire: an EC P-256 key pair made at start, kept only in
 * memory, and a self-signed certificate of it. Peers do not trust it through a CA but by its
 * SHA-256 fingerprint ({@link #fingerprint}), which the node publishes (its LoopPoolNode status) and
 * the peer pins: no key material is issued, stored or rotated; a restart makes a new pair.
 *
 * <p>BouncyCastle's certificate builder (the JDK has no public API for making a certificate) runs
 * on the JDK's own JCA provider: nothing is registered with java.security.Security.
 */
public record NodeKeys(PrivateKey privateKey, X509Certificate certificate, String fingerprint) {

    /** Longer than any process lives; the pin, not the validity, is what is trusted. */
    static final Duration VALIDITY = Duration.ofDays(3650);

    public static NodeKeys generate(String nodeName) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair pair = g.generateKeyPair();
            var name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "loopcsi transfer").addRDN(BCStyle.CN, nodeName).build();
            Instant now = Instant.now();
            var builder = new JcaX509v3CertificateBuilder(name, new BigInteger(128, new SecureRandom()), Date.from(now.minus(Duration.ofHours(1))),
                    Date.from(now.plus(VALIDITY)), name, pair.getPublic());
            var signer = new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate());
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(builder.build(signer));
            return new NodeKeys(pair.getPrivate(), cert, fingerprintOf(cert));
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the transfer key pair: " + e.getMessage(), e);
        }
    }

    /** SHA-256 of the certificate's DER encoding, lower-case hex without separators. */
    public static String fingerprintOf(X509Certificate cert) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(cert.getEncoded()));
        } catch (CertificateEncodingException | java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot hash a certificate: " + e.getMessage(), e);
        }
    }
}
