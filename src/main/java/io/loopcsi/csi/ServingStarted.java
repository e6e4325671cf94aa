package io.loopcsi.csi;

/**
 * CDI event fired once, on the main thread, after every socket of this process is published
 * (Main.Serving): from then on clients can connect. Work that only reports (logs a summary, warms a
 * cache) observes this instead of StartupEvent, so that it is not on the path to the first call.
 */
public record ServingStarted() {
}
