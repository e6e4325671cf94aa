package io.loopcsi.cli.csc;

/**
 * A command line that cannot be turned into a request: unknown verb or flag, a malformed
 * value, a missing argument. Its message names the offending part; nothing has been sent.
 */
final class UsageException extends Exception {

    UsageException(String message) {
        super(message);
    }
}
