package io.loopcsi.cli.evacuate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;

/**
 * The Eviction --evict sends follows the version discovery gives pods/eviction (as kubectl drain does):
 * policy/v1 on 1.22 and later, policy/v1beta1 on 1.20 and 1.21 (which serve policy/v1 for
 * PodDisruptionBudget only). The discovery entries below are what those servers answer on GET /api/v1.
 */
class EvictionVersionTest {

    static APIResource eviction(String group, String version) {
        return new APIResourceBuilder().withName("pods/eviction").withKind("Eviction").withGroup(group).withVersion(version)
                .withNamespaced(true).withVerbs("create").build();
    }

    static final APIResource PODS = new APIResourceBuilder().withName("pods").withKind("Pod").withNamespaced(true).build();
    static final APIResource BINDING = new APIResourceBuilder().withName("pods/binding").withKind("Binding").build();

    @Test
    void kubernetes122AndLaterAdvertiseV1AndGetV1() {
        assertEquals(EvictionVersion.V1, EvictionVersion.of(List.of(PODS, BINDING, eviction("policy", "v1"))));
    }

    @Test
    void kubernetes120And121AdvertiseV1beta1AndGetV1beta1() {
        assertEquals(EvictionVersion.V1BETA1, EvictionVersion.of(List.of(PODS, eviction("policy", "v1beta1"), BINDING)));
    }

    @Test
    void aSubresourceWithoutVersionOrNoneAtAllGetsV1beta1() {
        assertEquals(EvictionVersion.V1BETA1, EvictionVersion.of(List.of(PODS, eviction(null, null))));
        assertEquals(EvictionVersion.V1BETA1, EvictionVersion.of(List.of(PODS, BINDING)));
        assertEquals(EvictionVersion.V1BETA1, EvictionVersion.of(List.of()));
    }

    @Test
    void anotherGroupsV1IsNotTakenForPolicyV1() {
        assertEquals(EvictionVersion.V1BETA1, EvictionVersion.of(List.of(eviction("example.com", "v1"))));
    }

    /** eviction.go refuses a body whose name is not the pod's in the URL; apiVersion selects the decoder. */
    @Test
    void theV1BodyNamesThePodAndIsPolicyV1() throws Exception {
        JsonNode j = new ObjectMapper().readTree(new ObjectMapper().writeValueAsString(EvictionVersion.v1Body("ns1", "web-0")));
        assertEquals("policy/v1", j.path("apiVersion").asText());
        assertEquals("Eviction", j.path("kind").asText());
        assertEquals("web-0", j.path("metadata").path("name").asText());
        assertEquals("ns1", j.path("metadata").path("namespace").asText());
    }
}
