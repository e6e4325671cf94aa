package io.loopcsi.operator.kube;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * A stand-in for the check OLM's olm-operator makes before it installs a CSV's Deployment
 * (operator-framework/operator-lifecycle-manager v0.25, pkg/controller/operators/olm/requirements.go
 * {@code requirementAndPermissionStatus}): the CSV stays Pending, reason RequirementsNotMet, until
 * every requirement here is met. Each requirement is reported as OLM reports it in
 * {@code status.requirementStatus} (kind, name, Present / NotPresent / PresentNotAvailable /
 * PresentNotSatisfied):
 * <ul>
 * <li>{@code minKubeVersionStatus}: the server's version is at least {@code spec.minKubeVersion};</li>
 * <li>{@code requirementStatus}, per owned and required CRD: it exists, serves the CSV's version,
 * and is Established and NamesAccepted (else PresentNotAvailable); per {@code nativeAPIs} entry:
 * discovery serves that kind in that group/version ({@code isGVKRegistered});</li>
 * <li>{@code permissionStatus}, per ServiceAccount of {@code permissions} and
 * {@code clusterPermissions}: it exists in the CSV's namespace, is not owned by another CSV, and
 * every rule is allowed to it: {@code permissions} in that namespace, {@code clusterPermissions}
 * cluster-wide. OLM asks Kubernetes' RBAC authorizer (pkg/controller/install/rule_checker.go over
 * its informers' Roles and bindings) for the user {@code system:serviceaccount:NS:NAME} without
 * groups, one request per verb × group × resource × resource name (attributes_util.go
 * {@code toAttributesSet}); here the API server's own authorizer answers the same requests as
 * SubjectAccessReviews. (OLM also ignores RBAC objects owned by another CSV; nothing here is.)</li>
 * </ul>
 */
final class OlmRequirements {

    record Requirement(String kind, String name, String status, String message) {
        boolean met() {
            return status.equals("Present");
        }
    }

    private OlmRequirements() {
    }

    static boolean met(List<Requirement> requirements) {
        return requirements.stream().allMatch(Requirement::met);
    }

    static List<Requirement> of(KubernetesClient admin, JsonNode csv, String namespace) {
        List<Requirement> out = new ArrayList<>();
        String min = csv.at("/spec/minKubeVersion").asText("");
        if (!min.isEmpty()) {
            var v = admin.getKubernetesVersion();
            String server = v.getGitVersion().replaceFirst("^v", "").replaceFirst("[-+].*", "");
            out.add(new Requirement("ClusterServiceVersion", csv.at("/metadata/name").asText(),
                    compare(min.replaceFirst("^v", ""), server) <= 0 ? "Present" : "PresentNotSatisfied", "minKubeVersion " + min + ", server " + server));
        }
        for (String kind : List.of("owned", "required")) {
            for (JsonNode d : csv.at("/spec/customresourcedefinitions/" + kind)) {
                out.add(crd(admin, d.get("name").asText(), d.get("version").asText()));
            }
        }
        for (JsonNode api : csv.at("/spec/nativeAPIs")) {
            out.add(nativeApi(admin, api.path("group").asText(), api.get("version").asText(), api.get("kind").asText()));
        }
        List<String> accounts = new ArrayList<>();
        for (String kind : List.of("permissions", "clusterPermissions")) {
            csv.at("/spec/install/spec/" + kind).forEach(p -> {
                if (!accounts.contains(p.get("serviceAccountName").asText())) {
                    accounts.add(p.get("serviceAccountName").asText());
                }
            });
        }
        for (String account : accounts) {
            out.add(account(admin, csv, namespace, account));
        }
        return out;
    }

    private static Requirement crd(KubernetesClient admin, String name, String version) {
        CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions().withName(name).get();
        if (crd == null) {
            return new Requirement("CustomResourceDefinition", name, "NotPresent", "CRD is not present");
        }
        boolean served = crd.getSpec().getVersions().stream().anyMatch(v -> v.getName().equals(version) && Boolean.TRUE.equals(v.getServed()));
        if (!served) {
            return new Requirement("CustomResourceDefinition", name, "NotPresent", "CRD version not served");
        }
        var conditions = crd.getStatus() == null ? List.<io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionCondition>of()
                : crd.getStatus().getConditions();
        boolean established = conditions.stream().anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True"));
        boolean namesAccepted = conditions.stream().anyMatch(c -> c.getType().equals("NamesAccepted") && c.getStatus().equals("True"));
        return established && namesAccepted ? new Requirement("CustomResourceDefinition", name, "Present", "CRD is present and Established condition is true")
                : new Requirement("CustomResourceDefinition", name, "PresentNotAvailable", "CRD is present but the Established condition is False (not available)");
    }

    private static Requirement nativeApi(KubernetesClient admin, String group, String version, String kind) {
        String gv = group.isEmpty() ? version : group + "/" + version;
        APIResourceList resources;
        try {
            resources = admin.getApiResources(gv);
        } catch (KubernetesClientException e) {
            resources = null;
        }
        boolean served = resources != null && resources.getResources().stream().anyMatch(r -> r.getKind().equals(kind));
        return new Requirement(kind, version + "." + group, served ? "Present" : "NotPresent", served ? "Native API exists" : "Native API does not exist");
    }

    private static Requirement account(KubernetesClient admin, JsonNode csv, String namespace, String account) {
        ServiceAccount sa = admin.serviceAccounts().inNamespace(namespace).withName(account).get();
        if (sa == null) {
            return new Requirement("ServiceAccount", account, "NotPresent", "Service account does not exist");
        }
        boolean otherCsv = sa.getMetadata().getOwnerReferences().stream()
                .anyMatch(o -> o.getKind().equals("ClusterServiceVersion") && !o.getName().equals(csv.at("/metadata/name").asText()));
        if (otherCsv) {
            return new Requirement("ServiceAccount", account, "PresentNotSatisfied", "Service account is owned by another ClusterServiceVersion");
        }
        List<String> denied = new ArrayList<>();
        String user = "system:serviceaccount:" + namespace + ":" + account;
        for (String kind : List.of("permissions", "clusterPermissions")) {
            String scope = kind.equals("permissions") ? namespace : "";
            for (JsonNode p : csv.at("/spec/install/spec/" + kind)) {
                if (!p.get("serviceAccountName").asText().equals(account)) {
                    continue;
                }
                for (JsonNode rule : p.get("rules")) {
                    denied.addAll(deniedAttributes(admin, user, sa.getMetadata().getUid(), scope, rule));
                }
            }
        }
        return denied.isEmpty() ? new Requirement("ServiceAccount", account, "Present", "")
                : new Requirement("ServiceAccount", account, "PresentNotSatisfied", "Policy rule not satisfied for service account: " + denied);
    }

    /** toAttributesSet: every verb × group × resource × resource name (or non-resource URL) of the rule, asked of the authorizer. */
    private static List<String> deniedAttributes(KubernetesClient admin, String user, String uid, String namespace, JsonNode rule) {
        List<String> groups = list(rule.get("apiGroups"));
        List<String> resources = list(rule.get("resources"));
        List<String> names = list(rule.get("resourceNames"));
        List<String> urls = list(rule.get("nonResourceURLs"));
        List<String> denied = new ArrayList<>();
        for (String verb : list(rule.get("verbs"))) {
            for (String group : groups) {
                for (String resource : resources) {
                    for (String name : names) {
                        for (String url : urls) {
                            SubjectAccessReviewBuilder b = new SubjectAccessReviewBuilder();
                            var spec = b.withNewSpec().withUser(user).withUid(uid);
                            if (url.isEmpty()) {
                                String[] rs = resource.split("/", 2);
                                spec.withNewResourceAttributes().withVerb(verb).withGroup(group).withResource(rs[0])
                                        .withSubresource(rs.length > 1 ? rs[1] : null).withName(name.isEmpty() ? null : name)
                                        .withNamespace(namespace.isEmpty() ? null : namespace).endResourceAttributes();
                            } else {
                                spec.withNewNonResourceAttributes().withVerb(verb).withPath(url).endNonResourceAttributes();
                            }
                            spec.endSpec();
                            SubjectAccessReview r = admin.authorization().v1().subjectAccessReview().create(b.build());
                            if (!Boolean.TRUE.equals(r.getStatus().getAllowed())) {
                                denied.add(group + "/" + resource + ":" + verb + (name.isEmpty() ? "" : " " + name) + (url.isEmpty() ? "" : " " + url));
                            }
                        }
                    }
                }
            }
        }
        return denied;
    }

    /** The rule's list, or one empty string when it has none (as toAttributesSet does). */
    private static List<String> list(JsonNode values) {
        List<String> out = new ArrayList<>();
        if (values != null) {
            values.forEach(v -> out.add(v.asText()));
        }
        return out.isEmpty() ? List.of("") : out;
    }

    /** Dotted numeric versions. */
    static int compare(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int c = Integer.compare(i < x.length ? Integer.parseInt(x[i].replaceAll("\\D.*", "")) : 0,
                    i < y.length ? Integer.parseInt(y[i].replaceAll("\\D.*", "")) : 0);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }
}
