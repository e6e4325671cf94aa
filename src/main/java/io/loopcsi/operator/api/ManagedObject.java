package io.loopcsi.operator.api;

import java.util.Objects;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * One object the operator made (or adopted) for a pool, by UID: the operator's own record of what
 * it may update and delete. Labels, annotations and owner references are copied along with an
 * object (kubectl get -o yaml); a UID is the API server's and names one object only.
 */
public class ManagedObject {

    @JsonPropertyDescription("Kind, e.g. StorageClass.")
    private String kind;
    @JsonPropertyDescription("Namespace; empty for a cluster-scoped object.")
    private String namespace;
    @JsonPropertyDescription("Name.")
    private String name;
    @JsonPropertyDescription("The UID the API server gave the object when the operator created it.")
    private String uid;

    public ManagedObject() {
    }

    public ManagedObject(String kind, String namespace, String name, String uid) {
        this.kind = kind;
        this.namespace = namespace;
        this.name = name;
        this.uid = uid;
    }

    public String getKind() {
        return kind;
    }

    public void setKind(String kind) {
        this.kind = kind;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getUid() {
        return uid;
    }

    public void setUid(String uid) {
        this.uid = uid;
    }

    /** "Kind name" or "Kind namespace/name". */
    public String describe() {
        return kind + " " + (namespace == null || namespace.isEmpty() ? "" : namespace + "/") + name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ManagedObject m && Objects.equals(kind, m.kind) && Objects.equals(namespace, m.namespace)
                && Objects.equals(name, m.name) && Objects.equals(uid, m.uid);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, namespace, name, uid);
    }

    @Override
    public String toString() {
        return describe() + " (" + uid + ")";
    }
}
