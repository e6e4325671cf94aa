package io.loopcsi.transfer.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Set;
import java.util.function.Supplier;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts a peer exactly when its certificate's SHA-256 fingerprint is one of the pinned ones (read
 * at each handshake: the set of pool nodes changes). No CA, no chain, no host name: the
 * certificates are self-signed per process ({@link NodeKeys}) and the peers are addressed by IP.
 *
 * <p>An X509ExtendedTrustManager, so that the JDK calls it as it is: a plain X509TrustManager is
 * wrapped by the JDK in one that also checks the host name, which grpc-java asks for on every
 * client connection (ClientTlsHandler sets the HTTPS endpoint identification).
 */
public final class PinnedTrustManager extends X509ExtendedTrustManager {

    private final Supplier<Set<String>> pins;
    private final String peer;

    /** @param peer what the peer is, for the refusal's message ("the source node", "a client") */
    public PinnedTrustManager(Supplier<Set<String>> pins, String peer) {
        this.pins = pins;
        this.peer = peer;
    }

    private void check(X509Certificate[] chain) throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw new CertificateException(peer + " sent no certificate");
        }
        String fp = NodeKeys.fingerprintOf(chain[0]);
        if (!pins.get().contains(fp)) {
            throw new CertificateException(peer + "'s certificate (SHA-256 " + fp + ") is not pinned");
        }
        chain[0].checkValidity();
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        check(chain);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}
