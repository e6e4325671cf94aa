package io.loopcsi.cli.evacuate;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The progress of one move, kept as JSON in the annotation {@value #ANNOTATION} of the OLD
 * PersistentVolume: that object outlives every step (its reclaim policy is Retain from the first
 * step on), so a run that stopped anywhere finds here where the volume goes and the claim as it was,
 * even after the claim was deleted and before it was made again. The steps, in order:
 *
 * <pre>
 * copy    the old PV is Retain and recorded; the copy on the target node is being made
 * claim   the copy and its PV exist; the old claim is replaced by one bound to the new PV
 * source  the claim is bound to the new PV; the old volume and its PV are deleted
 * kept    done, the old volume kept (--keep-source); a run without --keep-source deletes it
 * </pre>
 *
 * @param from the node evacuated
 * @param to the node the copy is made on
 * @param newPv the new PersistentVolume's name, also the CSI request name of the copy
 * @param reclaimPolicy the old PV's reclaim policy before the move (the new PV's when its class is gone)
 * @param claim the claim as it was, JSON (metadata and spec, no status)
 * @param step the step reached
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@RegisterForReflection // read and written by Jackson, also in the native executable
public record MoveRecord(String from, String to, String newPv, String reclaimPolicy, String claim, String step) {

    public static final String ANNOTATION = "loopcsi.io/evacuation";
    public static final String COPY = "copy", CLAIM = "claim", SOURCE = "source", KEPT = "kept";

    private static final ObjectMapper JSON = new ObjectMapper();

    public MoveRecord at(String next) {
        return new MoveRecord(from, to, newPv, reclaimPolicy, claim, next);
    }

    public String json() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The record on a PV, or null when it has none (or one that cannot be read: it is then not ours to continue). */
    public static MoveRecord of(PersistentVolume pv) {
        String v = pv.getMetadata().getAnnotations() == null ? null : pv.getMetadata().getAnnotations().get(ANNOTATION);
        if (v == null) {
            return null;
        }
        try {
            MoveRecord r = JSON.readValue(v, MoveRecord.class);
            return r.to() == null || r.newPv() == null || r.claim() == null || r.step() == null ? null : r;
        } catch (JsonProcessingException e) {
            return null;
        }
    }
}
