package io.loopcsi.cli.csc;

import java.io.PrintStream;
import java.util.function.Supplier;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;

/**
 * Where results go: stdout only, each result as soon as it arrives (a multi-volume command shows
 * its progress up to a failure). Text is csc's line format; {@code --format json} prints each
 * response as canonical protobuf JSON on one line, so a script can read one response per line.
 */
final class Output {

    private final PrintStream out;
    private final boolean json;

    Output(PrintStream out, boolean json) {
        this.out = out;
        this.json = json;
    }

    /** Prints the response: as JSON, or as the text (complete lines, possibly none) the supplier builds. */
    void emit(MessageOrBuilder response, Supplier<String> text) {
        if (json) {
            try {
                out.println(JsonFormat.printer().omittingInsignificantWhitespace().print(response));
            } catch (InvalidProtocolBufferException e) {
                // only Any fields without a type registry can fail; CSI responses have none
                throw new IllegalStateException("cannot print " + response.getDescriptorForType().getName() + " as JSON", e);
            }
        } else {
            out.print(text.get());
        }
        out.flush();
    }
}
