package io.loopcsi.bench;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * What the transfer's TLS cipher alone costs per MiB on this machine and JVM: AES-128-GCM (the TLS
 * 1.3 suite a netty client and server agree on: TLS_AES_128_GCM_SHA256 comes first in netty 4.1's
 * Http2SecurityUtil.CIPHERS, which grpc-java's GrpcSslContexts configures at both ends), through the
 * JDK's provider as the JDK's SSLEngine uses it, on TLS records of 16 KiB, each encrypted and then
 * decrypted. The floor of the transfer's CPU per MiB that no change outside the cipher can lower.
 */
final class CipherCost {

    private static final int RECORD = 16 << 10;

    private CipherCost() {
    }

    /** Wall milliseconds per MiB (one thread) to encrypt and decrypt {@code mib} MiB, after as much again untimed (the JIT). */
    static double msPerMib(int mib) throws GeneralSecurityException {
        run(mib);
        long s = System.nanoTime();
        run(mib);
        return (System.nanoTime() - s) / 1e6 / mib;
    }

    private static void run(int mib) throws GeneralSecurityException {
        SecretKeySpec key = new SecretKeySpec(new byte[16], "AES");
        Cipher enc = Cipher.getInstance("AES/GCM/NoPadding");
        Cipher dec = Cipher.getInstance("AES/GCM/NoPadding");
        ByteBuffer plain = ByteBuffer.allocateDirect(RECORD);
        ByteBuffer sealed = ByteBuffer.allocateDirect(RECORD + 16);
        ByteBuffer opened = ByteBuffer.allocateDirect(RECORD + 16);
        byte[] iv = new byte[12];
        long records = (long) mib * (1 << 20) / RECORD;
        for (long r = 0; r < records; r++) {
            ByteBuffer.wrap(iv).putLong(4, r); // a nonce per record, as TLS 1.3 derives it from the sequence number
            GCMParameterSpec nonce = new GCMParameterSpec(128, iv);
            plain.clear();
            sealed.clear();
            opened.clear();
            enc.init(Cipher.ENCRYPT_MODE, key, nonce);
            enc.doFinal(plain, sealed);
            sealed.flip();
            dec.init(Cipher.DECRYPT_MODE, key, nonce);
            dec.doFinal(sealed, opened);
        }
    }
}
