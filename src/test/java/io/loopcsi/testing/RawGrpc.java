package io.loopcsi.testing;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;

import io.loopcsi.csi.Endpoint;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.Http2EventAdapter;
import io.netty.handler.codec.http2.Http2FrameLogger;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.logging.LogLevel;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;

/**
 * A gRPC client that writes the HTTP/2 frames itself (netty's HTTP/2 codec, no gRPC library),
 * so a test controls exactly what goes on the wire, the {@code :authority} above all, as old
 * grpc-go clients send it. One call per stream; responses are read with a small flow-control
 * window, so a large reply needs many DATA frames and WINDOW_UPDATEs.
 */
public final class RawGrpc implements AutoCloseable {

    /** What came back for one call. grpcStatus -1 when no trailers came; rstCode -1 when the stream was not reset. */
    public record Reply(int grpcStatus, String grpcMessage, byte[] body, int dataFrames, long rstCode) {

        public <T extends MessageLite> T message(Parser<T> parser) throws InvalidProtocolBufferException {
            ByteBuffer b = ByteBuffer.wrap(body);
            if (b.remaining() < 5 || b.get() != 0) {
                throw new IllegalStateException("not one uncompressed gRPC message: " + body.length + " bytes");
            }
            int len = b.getInt();
            if (len != b.remaining()) {
                throw new IllegalStateException("gRPC message of " + len + " bytes in a body of " + body.length);
            }
            return parser.parseFrom(b);
        }
    }

    /** The stream window this client announces: small, so large replies need window updates. */
    public static final int STREAM_WINDOW = 16 * 1024;

    private final EventLoopGroup group = new EpollEventLoopGroup(1);
    private final Channel channel;
    private final Http2ConnectionHandler http2;
    private final AtomicInteger nextStream = new AtomicInteger(1);
    private final java.util.Map<Integer, Call> calls = new java.util.concurrent.ConcurrentHashMap<>();
    /** WINDOW_UPDATE frames this client sent (flow control at work). */
    public final AtomicInteger windowUpdatesSent = new AtomicInteger();

    private static final class Call {
        final CompletableFuture<Reply> done = new CompletableFuture<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        int dataFrames;
    }

    public RawGrpc(Endpoint endpoint) throws InterruptedException {
        http2 = new Http2ConnectionHandlerBuilder()
                .server(false)
                .validateHeaders(false)
                .initialSettings(Http2Settings.defaultSettings().initialWindowSize(STREAM_WINDOW))
                .frameLogger(new Http2FrameLogger(LogLevel.TRACE) {
                    @Override
                    public void logWindowsUpdate(Direction direction, ChannelHandlerContext ctx, int streamId, int increment) {
                        if (direction == Direction.OUTBOUND) {
                            windowUpdatesSent.incrementAndGet();
                        }
                    }
                })
                .frameListener(new Listener())
                .build();
        Bootstrap b = new Bootstrap().group(group).handler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(http2, new io.netty.channel.ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                        failAll(new IllegalStateException("connection closed"));
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        failAll(cause);
                    }
                });
            }
        });
        if (endpoint.isUnix()) {
            channel = b.channel(EpollDomainSocketChannel.class).connect(new DomainSocketAddress(endpoint.socket().toString())).sync().channel();
        } else {
            channel = b.channel(EpollSocketChannel.class).connect(new InetSocketAddress(endpoint.host(), endpoint.port())).sync().channel();
        }
    }

    /**
     * Calls method ("csi.v1.Identity/Probe") with the request, sending {@code :authority} as given
     * (null: no {@code :authority} at all), and waits for the whole reply.
     */
    public Reply call(String method, MessageLite request, String authority) throws Exception {
        int id = nextStream.getAndAdd(2);
        Call call = new Call();
        calls.put(id, call);
        Http2Headers h = new DefaultHttp2Headers(false) // unvalidated: netty refuses to send an empty :authority
                .method("POST").scheme("http").path("/" + method)
                .add("content-type", "application/grpc")
                .add("te", "trailers")
                .add("user-agent", "grpc-go/1.9.2");
        if (authority != null) {
            h.authority(authority);
        }
        byte[] msg = request.toByteArray();
        ByteBuf data = Unpooled.buffer(5 + msg.length).writeByte(0).writeInt(msg.length).writeBytes(msg);
        channel.eventLoop().execute(() -> {
            try {
                write(call, id, h, data);
            } catch (RuntimeException e) {
                call.done.completeExceptionally(e);
            }
        });
        try {
            return call.done.get(60, TimeUnit.SECONDS);
        } finally {
            calls.remove(id);
        }
    }

    private void write(Call call, int id, Http2Headers h, ByteBuf data) {
        ChannelHandlerContext ctx = channel.pipeline().context(http2);
        GenericFutureListener<Future<Void>> failed = f -> {
            if (!f.isSuccess()) {
                call.done.completeExceptionally(f.cause());
            }
        };
        http2.encoder().writeHeaders(ctx, id, h, 0, false, ctx.newPromise().addListener(failed));
        http2.encoder().writeData(ctx, id, data, 0, true, ctx.newPromise().addListener(failed));
        // through the handler's own flush: DATA waits in its flow controller until then
        channel.flush();
    }

    private void failAll(Throwable cause) {
        calls.values().forEach(c -> c.done.completeExceptionally(cause));
    }

    private final class Listener extends Http2EventAdapter {
        @Override
        public void onGoAwayRead(ChannelHandlerContext ctx, int lastStreamId, long errorCode, ByteBuf debugData) {
            failAll(new IllegalStateException("GOAWAY " + errorCode + ": " + debugData.toString(java.nio.charset.StandardCharsets.UTF_8)));
        }

        @Override
        public int onDataRead(ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
            int n = data.readableBytes() + padding;
            Call c = calls.get(streamId);
            if (c != null) {
                c.dataFrames++;
                byte[] bytes = new byte[data.readableBytes()];
                data.readBytes(bytes);
                c.body.writeBytes(bytes);
                if (endOfStream) {
                    c.done.complete(new Reply(-1, null, c.body.toByteArray(), c.dataFrames, -1));
                }
            }
            return n; // consumed: the flow controller returns the credit with WINDOW_UPDATE
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding, boolean endOfStream) {
            Call c = calls.get(streamId);
            if (c != null && endOfStream) {
                CharSequence status = headers.get("grpc-status");
                CharSequence message = headers.get("grpc-message");
                c.done.complete(new Reply(status == null ? -1 : Integer.parseInt(status.toString()),
                        message == null ? null : message.toString(), c.body.toByteArray(), c.dataFrames, -1));
            }
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int streamDependency, short weight,
                boolean exclusive, int padding, boolean endOfStream) {
            onHeadersRead(ctx, streamId, headers, padding, endOfStream);
        }

        @Override
        public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
            Call c = calls.get(streamId);
            if (c != null) {
                c.done.complete(new Reply(-1, null, c.body.toByteArray(), c.dataFrames, errorCode));
            }
        }
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
