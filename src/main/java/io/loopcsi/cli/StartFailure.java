package io.loopcsi.cli;

import java.util.ArrayList;
import java.util.List;

/** One line for a failed start: what failed, from the innermost exception that says something. */
final class StartFailure {

    private StartFailure() {
    }

    static String describe(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        for (Throwable t : chain) {
            if (t instanceof io.quarkus.runtime.QuarkusBindException b) {
                return "address " + b.getHost() + ":" + b.getPort() + " is in use by another process (--http-address)";
            }
        }
        for (int i = chain.size() - 1; i >= 0; i--) {
            Throwable t = chain.get(i);
            String m = t.getMessage();
            if (m != null && !m.isBlank()) {
                // a multi-line message ("...failed:" then one problem per line): its first two lines
                List<String> lines = m.strip().lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
                String line = lines.get(0).endsWith(":") && lines.size() > 1 ? lines.get(0) + " " + lines.get(1) : lines.get(0);
                return t instanceof java.net.BindException ? "cannot listen: " + line + " (--http-address)" : line;
            }
        }
        return failure.getClass().getName();
    }
}
