package io.loopcsi.cli;

import java.util.ArrayList;
import java.util.List;

/** One line for a failed start: what failed, from the innermost exception that says something. */
final class StartFailure {

    private StartFailure() {
    }

    /**
     * The failure in one line; addresses are the flags naming where this process listens (e.g.
     * "--endpoint tcp://127.0.0.1:10000"), named when one of them was in use.
     */
    static String describe(Throwable failure, List<String> addresses) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        for (Throwable t : chain) {
            if (t instanceof java.net.BindException || String.valueOf(t.getMessage()).contains("Address already in use")) {
                return "address already in use by another process: " + String.join(" or ", addresses)
                        + " (stop the other process or choose another address)";
            }
        }
        for (int i = chain.size() - 1; i >= 0; i--) {
            Throwable t = chain.get(i);
            String m = t.getMessage();
            if (m != null && !m.isBlank()) {
                // a multi-line message ("...failed:" then one problem per line): its first two lines
                List<String> lines = m.strip().lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
                return lines.get(0).endsWith(":") && lines.size() > 1 ? lines.get(0) + " " + lines.get(1) : lines.get(0);
            }
        }
        return failure.getClass().getName();
    }
}
