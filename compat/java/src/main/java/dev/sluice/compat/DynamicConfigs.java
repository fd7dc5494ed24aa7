package dev.sluice.compat;

import static dev.sluice.compat.Cases.admin;
import static dev.sluice.compat.Cases.check;
import static dev.sluice.compat.Cases.createTopic;
import static dev.sluice.compat.Cases.describe;
import static dev.sluice.compat.Cases.topic;
import static dev.sluice.compat.Cases.waitFor;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;

/**
 * Dynamic broker configs (KIP-226) through the Admin client: set per broker and as the
 * cluster default, described with Kafka's sources and synonyms, inherited by topics, refused
 * where Kafka refuses, and deleted back to the static values. Leaves the broker as it found it.
 */
final class DynamicConfigs {
    private DynamicConfigs() {}

    static void run() throws Exception {
        try (Admin admin = admin()) {
            String node = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().idString();
            ConfigResource own = new ConfigResource(ConfigResource.Type.BROKER, node);
            ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
            try {
                set(admin, cluster, "log.retention.ms", "86400000");
                set(admin, own, "log.segment.delete.delay.ms", "30000");
                // Kafka answers once the controller has the change; its broker applies it after.
                waitFor("the dynamic configs applied", () -> {
                    Config c = describe(admin, own);
                    return "30000".equals(c.get("log.segment.delete.delay.ms").value())
                            && "86400000".equals(c.get("log.retention.ms").value());
                });
                Config broker = describeWithSynonyms(admin, own);
                ConfigEntry retention = broker.get("log.retention.ms");
                check("86400000".equals(retention.value())
                        && retention.source() == ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
                        && !retention.isReadOnly()
                        && retention.synonyms().get(0).source() == ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                        "log.retention.ms %s", retention);
                ConfigEntry delay = broker.get("log.segment.delete.delay.ms");
                check("30000".equals(delay.value()) && delay.source() == ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG,
                        "log.segment.delete.delay.ms %s", delay);
                check(broker.get("num.partitions").isReadOnly(), "num.partitions is not read-only");
                Config defaults = describe(admin, cluster);
                check(defaults.get("log.retention.ms") != null && defaults.get("log.segment.delete.delay.ms") == null,
                        "the default resource lists the dynamic defaults only: %s", defaults);

                String topic = topic("dynamic");
                createTopic(admin, topic, 1, Map.of());
                ConfigEntry inherited = describe(admin, new ConfigResource(ConfigResource.Type.TOPIC, topic)).get("retention.ms");
                check("86400000".equals(inherited.value())
                        && inherited.source() == ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                        "a topic inherits the dynamic default: %s", inherited);

                refused(admin, cluster, "num.partitions", "3",
                        "Cannot update these configs dynamically: [num.partitions]");
                refused(admin, cluster, "listeners", "PLAINTEXT://127.0.0.1:0",
                        "Cannot update these configs at default cluster level, broker id must be specified: [listeners]");
                refused(admin, cluster, "log.retention.ms", "soon",
                        "Invalid value soon for configuration log.retention.ms: Not a number of type LONG");
            } finally {
                delete(admin, cluster, "log.retention.ms");
                delete(admin, own, "log.segment.delete.delay.ms");
            }
            waitFor("log.retention.ms back to its static value", () ->
                    describe(admin, own).get("log.retention.ms").source() != ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        }
    }

    /**
     * GROUP configs of a consumer group: set, described as the group's own (DYNAMIC_GROUP_CONFIG),
     * refused outside the broker's bounds and for an unknown name with Kafka 4.4's messages.
     */
    static void groupConfigs() throws Exception {
        try (Admin admin = admin()) {
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "java-group-configs-" + Cases.RUN);
            set(admin, group, "consumer.session.timeout.ms", "50000");
            set(admin, group, "consumer.heartbeat.interval.ms", "6000");
            waitFor("the group configs stored", () ->
                    "50000".equals(describe(admin, group).get("consumer.session.timeout.ms").value()));
            Config described = describeWithSynonyms(admin, group);
            ConfigEntry session = described.get("consumer.session.timeout.ms");
            check(session.source() == ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG
                    && session.synonyms().size() == 2
                    && "group.consumer.session.timeout.ms".equals(session.synonyms().get(1).name()),
                    "consumer.session.timeout.ms %s", session);
            check("6000".equals(described.get("consumer.heartbeat.interval.ms").value()),
                    "consumer.heartbeat.interval.ms %s", described.get("consumer.heartbeat.interval.ms"));
            for (String name : List.of("streams.session.timeout.ms", "streams.num.standby.replicas", "share.auto.offset.reset")) {
                check(described.get(name) != null, "%s is not described", name);
            }
            invalid(admin, group, "consumer.session.timeout.ms", "1000",
                    "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.");
            invalid(admin, group, "streams.num.standby.replicas", "5",
                    "streams.num.standby.replicas must be less than or equal to 2");
            invalid(admin, group, "foo.bar", "1", "Unknown group config name: foo.bar");
            delete(admin, group, "consumer.session.timeout.ms");
            delete(admin, group, "consumer.heartbeat.interval.ms");
        }
    }

    static void invalid(Admin admin, ConfigResource resource, String name, String value, String message) throws Exception {
        try {
            set(admin, resource, name, value);
        } catch (ExecutionException e) {
            check(e.getCause() instanceof org.apache.kafka.common.errors.InvalidConfigurationException
                    && message.equals(e.getCause().getMessage()),
                    "%s=%s: expected INVALID_CONFIG '%s', got %s", name, value, message, e.getCause());
            return;
        }
        throw new AssertionError(name + "=" + value + " was accepted");
    }

    static Config describeWithSynonyms(Admin admin, ConfigResource resource) throws Exception {
        return admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true))
                .all().get(30, TimeUnit.SECONDS).get(resource);
    }

    static void alter(Admin admin, ConfigResource resource, String name, String value, AlterConfigOp.OpType op)
            throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(name, value), op))))
                .all().get(30, TimeUnit.SECONDS);
    }

    static void set(Admin admin, ConfigResource resource, String name, String value) throws Exception {
        alter(admin, resource, name, value, AlterConfigOp.OpType.SET);
    }

    static void delete(Admin admin, ConfigResource resource, String name) throws Exception {
        alter(admin, resource, name, null, AlterConfigOp.OpType.DELETE);
    }

    static void refused(Admin admin, ConfigResource resource, String name, String value, String message) throws Exception {
        try {
            set(admin, resource, name, value);
        } catch (ExecutionException e) {
            check(e.getCause() instanceof InvalidRequestException && message.equals(e.getCause().getMessage()),
                    "%s=%s: expected INVALID_REQUEST '%s', got %s", name, value, message, e.getCause());
            return;
        }
        throw new AssertionError(name + "=" + value + " was accepted");
    }
}
