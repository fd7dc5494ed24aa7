// Prints Kafka's API table as src/cli/kafka_apis.rs holds it: id, name, oldest and newest
// version (unstable versions excluded, as the client uses them), and whether the Java client
// lists it among its APIs (ApiKeys.clientApis(): kafka-broker-api-versions prints those the
// node does not advertise as UNSUPPORTED). Run by `compat/kafka-peer/kafka api-keys`.
import org.apache.kafka.common.protocol.ApiKeys;
import java.util.Set;

public class ApiKeysTable {
    public static void main(String[] args) {
        Set<ApiKeys> client = ApiKeys.clientApis();
        for (ApiKeys k : ApiKeys.values()) {
            System.out.println("    (" + k.id + ", \"" + k.name + "\", " + k.oldestVersion() + ", "
                + k.latestVersion() + ", " + client.contains(k) + "),");
        }
    }
}
