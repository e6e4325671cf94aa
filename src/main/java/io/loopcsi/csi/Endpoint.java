package io.loopcsi.csi;

import java.nio.file.Path;

/**
 * A CSI endpoint: {@code unix:///abs/path}, {@code unix://relative/path}, a bare path, or
 * {@code tcp://host:port}.
 */
public record Endpoint(Path socket, String host, int port) {

    public static Endpoint parse(String s) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("endpoint is empty");
        }
        if (s.startsWith("tcp://")) {
            String hp = s.substring("tcp://".length());
            int colon = hp.lastIndexOf(':');
            if (colon <= 0 || colon == hp.length() - 1) {
                throw new IllegalArgumentException("endpoint " + s + ": expected tcp://HOST:PORT");
            }
            int port;
            try {
                port = Integer.parseInt(hp.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("endpoint " + s + ": port is not a number");
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("endpoint " + s + ": port out of range");
            }
            String host = hp.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return new Endpoint(null, host, port);
        }
        String path = s.startsWith("unix://") ? s.substring("unix://".length()) : s;
        if (path.isEmpty() || s.contains("://") && !s.startsWith("unix://")) {
            throw new IllegalArgumentException("endpoint " + s + ": expected unix:///PATH, a path, or tcp://HOST:PORT");
        }
        return new Endpoint(Path.of(path).toAbsolutePath().normalize(), null, 0);
    }

    public boolean isUnix() {
        return socket != null;
    }

    @Override
    public String toString() {
        return isUnix() ? "unix://" + socket : "tcp://" + host + ":" + port;
    }
}
