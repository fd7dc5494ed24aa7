package dev.sluice.compat;

import static dev.sluice.compat.Cases.admin;
import static dev.sluice.compat.Cases.check;
import static dev.sluice.compat.Cases.topic;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

/**
 * Client quotas (KIP-546) through the Admin client: set for a user, a client id, a user with
 * the default client id and an IP; described with exact, default and any-entity filters
 * (strict and not); validate-only changes nothing; refused with Kafka's message; removed.
 */
final class ClientQuotas {
    private ClientQuotas() {}

    private static ClientQuotaEntity entity(String... typeAndName) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < typeAndName.length; i += 2) map.put(typeAndName[i], typeAndName[i + 1]);
        return new ClientQuotaEntity(map);
    }

    private static void alter(Admin admin, ClientQuotaEntity entity, boolean validateOnly, ClientQuotaAlteration.Op... ops)
            throws Exception {
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity, List.of(ops))),
                new AlterClientQuotasOptions().validateOnly(validateOnly)).all().get(30, TimeUnit.SECONDS);
    }

    private static Map<ClientQuotaEntity, Map<String, Double>> describe(Admin admin, ClientQuotaFilter filter)
            throws Exception {
        return admin.describeClientQuotas(filter).entities().get(30, TimeUnit.SECONDS);
    }

    static void run() throws Exception {
        String user = topic("quota-user");
        String client = topic("quota-client");
        try (Admin admin = admin()) {
            ClientQuotaEntity ofUser = entity(ClientQuotaEntity.USER, user);
            ClientQuotaEntity ofClient = entity(ClientQuotaEntity.CLIENT_ID, client);
            ClientQuotaEntity userDefaultClient = entity(ClientQuotaEntity.USER, user, ClientQuotaEntity.CLIENT_ID, null);
            ClientQuotaEntity ip = entity(ClientQuotaEntity.IP, "10.20.30.40");
            alter(admin, ofUser, false,
                    new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0),
                    new ClientQuotaAlteration.Op("consumer_byte_rate", 2097152.0));
            alter(admin, ofClient, false, new ClientQuotaAlteration.Op("request_percentage", 12.5));
            alter(admin, userDefaultClient, false, new ClientQuotaAlteration.Op("controller_mutation_rate", 4.0));
            alter(admin, ip, false, new ClientQuotaAlteration.Op("connection_creation_rate", 30.0));
            alter(admin, entity(ClientQuotaEntity.CLIENT_ID, client + "-validated"), true,
                    new ClientQuotaAlteration.Op("producer_byte_rate", 1.0));

            Map<ClientQuotaEntity, Map<String, Double>> exact = describe(admin,
                    ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user))));
            check(exact.size() == 2
                    && exact.get(ofUser).equals(Map.of("producer_byte_rate", 1048576.0, "consumer_byte_rate", 2097152.0))
                    && exact.get(userDefaultClient).equals(Map.of("controller_mutation_rate", 4.0)),
                    "the user's entities: %s", exact);
            Map<ClientQuotaEntity, Map<String, Double>> strict = describe(admin,
                    ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user))));
            check(strict.keySet().equals(Collections.singleton(ofUser)), "strict: only the user alone: %s", strict);
            Map<ClientQuotaEntity, Map<String, Double>> clients = describe(admin,
                    ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.CLIENT_ID))));
            check(clients.containsKey(ofClient) && !clients.containsKey(entity(ClientQuotaEntity.CLIENT_ID, client + "-validated")),
                    "client ids (validate-only left out): %s", clients);
            Map<ClientQuotaEntity, Map<String, Double>> defaults = describe(admin,
                    ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.CLIENT_ID),
                            ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user))));
            check(defaults.keySet().equals(Collections.singleton(userDefaultClient)), "default client id of the user: %s", defaults);
            Map<ClientQuotaEntity, Map<String, Double>> ips = describe(admin,
                    ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.IP, "10.20.30.40"))));
            check(Map.of("connection_creation_rate", 30.0).equals(ips.get(ip)), "the IP's quota: %s", ips);

            try {
                alter(admin, ofClient, false, new ClientQuotaAlteration.Op("producer_byte_rate", 0.5));
                check(false, "a fractional byte rate was accepted");
            } catch (ExecutionException e) {
                check(e.getCause() instanceof InvalidRequestException
                        && "producer_byte_rate cannot be a fractional value.".equals(e.getCause().getMessage()),
                        "refusal: %s", e.getCause());
            }

            List<ClientQuotaAlteration> removals = new ArrayList<>();
            removals.add(new ClientQuotaAlteration(ofUser, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", null),
                    new ClientQuotaAlteration.Op("consumer_byte_rate", null))));
            removals.add(new ClientQuotaAlteration(ofClient, List.of(new ClientQuotaAlteration.Op("request_percentage", null))));
            removals.add(new ClientQuotaAlteration(userDefaultClient,
                    List.of(new ClientQuotaAlteration.Op("controller_mutation_rate", null))));
            removals.add(new ClientQuotaAlteration(ip, List.of(new ClientQuotaAlteration.Op("connection_creation_rate", null))));
            admin.alterClientQuotas(removals).all().get(30, TimeUnit.SECONDS);
            Map<ClientQuotaEntity, Map<String, Double>> left = describe(admin,
                    ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user))));
            check(left.isEmpty(), "removed: %s", left);
        }
    }
}
