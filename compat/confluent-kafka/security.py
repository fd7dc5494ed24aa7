"""confluent-kafka (librdkafka inside) against the secure broker of lib.sh's
start_secure_broker: SSL with and without a client certificate, SASL PLAIN / SCRAM-SHA-256 /
SCRAM-SHA-512 / OAUTHBEARER over SASL_PLAINTEXT and SASL_SSL, a wrong password refused while
others are served, ACLs made, described and deleted with the AdminClient, SCRAM credentials made
with alter_user_scram_credentials and used at once, and a certificate's mapped principal
meeting an ACL.
Usage: security.py SSL SASL_PLAINTEXT SASL_SSL MTLS PKI_DIR
Prints 'ok   confluent-kafka/<case>' or 'FAIL confluent-kafka/<case>: <detail>'."""
import os, sys, time, uuid
from confluent_kafka import Consumer, Producer, TopicPartition, KafkaError
from confluent_kafka.admin import (
    AdminClient, NewTopic, AclBinding, AclBindingFilter, ResourceType, ResourcePatternType,
    AclOperation, AclPermissionType, ScramCredentialInfo, ScramMechanism,
    UserScramCredentialUpsertion,
)

ssl, sasl_plaintext, sasl_ssl, mtls, pki = sys.argv[1:6]
ca = os.path.join(pki, "ca.pem")
failures = 0


def report(name, ok, detail=""):
    global failures
    if ok:
        print(f"ok   confluent-kafka/{name}", flush=True)
    else:
        failures += 1
        print(f"FAIL confluent-kafka/{name}: {detail}", flush=True)


def case(name, fn):
    try:
        fn()
    except Exception as e:  # a crashed case is a failed case
        report(name, False, repr(e))


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def sasl(broker, mechanism, user, password, tls=False):
    return {
        "bootstrap.servers": broker,
        "security.protocol": "sasl_ssl" if tls else "sasl_plaintext",
        "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password,
        **({"ssl.ca.location": ca} if tls else {}),
    }


ADMIN = sasl(sasl_plaintext, "PLAIN", "admin", "admin-secret")
SSL = {"bootstrap.servers": ssl, "security.protocol": "ssl", "ssl.ca.location": ca}
MTLS = {
    "bootstrap.servers": mtls, "security.protocol": "ssl", "ssl.ca.location": ca,
    "ssl.certificate.location": os.path.join(pki, "client.pem"),
    "ssl.key.location": os.path.join(pki, "client.key"),
}
admin = AdminClient(ADMIN)


def create(topic):
    for f in admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]).values():
        f.result(15)


def round_trip(name, conf, count=20):
    topic = unique(name)
    create(topic)
    p = Producer({**conf, "linger.ms": 5})
    for i in range(count):
        p.produce(topic, value=f"v{i}".encode())
    left = p.flush(30)
    c = Consumer({**conf, "group.id": unique("g"), "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got, deadline = [], time.time() + 30
    while len(got) < count and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append(m.value().decode())
    c.close()
    report(name, left == 0 and got == [f"v{i}" for i in range(count)], f"{left} unsent, {len(got)} read")


def produce_error(conf, topic):
    """The delivery error of one record (None when it is written)."""
    errors = []
    p = Producer({**conf, "message.timeout.ms": 10000})
    p.produce(topic, value=b"x", on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    return errors[0].code() if errors and errors[0] is not None else (None if errors else "no delivery report")


def metadata_error(conf):
    try:
        AdminClient({**conf, "socket.timeout.ms": 5000}).list_topics(timeout=5)
        return None
    except Exception as e:
        return repr(e)


case("ssl", lambda: round_trip("ssl", SSL))
case("ssl-client-certificate", lambda: round_trip("ssl-client-certificate", MTLS))
for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]:
    name = f"sasl-plaintext-{mechanism.lower()}"
    case(name, lambda n=name, m=mechanism: round_trip(n, sasl(sasl_plaintext, m, "alice", "alice-secret")))
    name = f"sasl-ssl-{mechanism.lower()}"
    case(name, lambda n=name, m=mechanism: round_trip(n, sasl(sasl_ssl, m, "alice", "alice-secret", tls=True)))
OAUTHBEARER = {"sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
               "sasl.oauthbearer.config": "principal=alice"}
case("sasl-oauthbearer", lambda: round_trip("sasl-oauthbearer", {
    "bootstrap.servers": sasl_plaintext, "security.protocol": "sasl_plaintext", **OAUTHBEARER,
}))
case("sasl-ssl-oauthbearer", lambda: round_trip("sasl-ssl-oauthbearer", {
    "bootstrap.servers": sasl_ssl, "security.protocol": "sasl_ssl", "ssl.ca.location": ca, **OAUTHBEARER,
}))


def wrong_password():
    refused = metadata_error(sasl(sasl_plaintext, "SCRAM-SHA-256", "alice", "not-her-password"))
    served = metadata_error(sasl(sasl_plaintext, "SCRAM-SHA-256", "alice", "alice-secret"))
    report("wrong-password-refused", refused is not None and served is None, f"refused={refused} served={served}")


case("wrong-password-refused", wrong_password)


def acls():
    topic = unique("acl")
    create(topic)
    binding = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:admin", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    for f in admin.create_acls([binding]).values():
        f.result(10)
    found = admin.describe_acls(AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL,
                                                 None, None, AclOperation.ANY, AclPermissionType.ANY)).result(10)
    alice = sasl(sasl_plaintext, "PLAIN", "alice", "alice-secret")
    denied = produce_error(alice, topic)
    as_admin = produce_error(ADMIN, topic)
    deleted = [f.result(10) for f in admin.delete_acls([AclBindingFilter(
        ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
        AclOperation.ANY, AclPermissionType.ANY)]).values()]
    allowed = produce_error(alice, topic)
    report("acls-deny-then-allow",
           found == [binding] and denied == KafkaError.TOPIC_AUTHORIZATION_FAILED and as_admin is None
           and len(deleted[0]) == 1 and allowed is None,
           f"found={found} denied={denied} admin={as_admin} deleted={deleted} allowed={allowed}")


case("acls-deny-then-allow", acls)


def scram_admin():
    user = unique("carol")
    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"carol-pw")
    for f in admin.alter_user_scram_credentials([upsert]).values():
        f.result(10)
    # Named users: one future each.
    infos = admin.describe_user_scram_credentials([user])[user].result(10).scram_credential_infos
    used = metadata_error(sasl(sasl_ssl, "SCRAM-SHA-512", user, "carol-pw", tls=True))
    report("scram-credentials-made-and-used-at-once",
           used is None and [(i.mechanism, i.iterations) for i in infos] == [(ScramMechanism.SCRAM_SHA_512, 8192)],
           f"used={used} infos={infos}")


case("scram-credentials-made-and-used-at-once", scram_admin)


def mapped_principal():
    topic = unique("mapped")
    create(topic)
    # The client certificate's subject CN=alice,O=compat maps to User:alice (listener rule).
    bindings = [AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                           op, AclPermissionType.ALLOW) for op in (AclOperation.WRITE, AclOperation.DESCRIBE)]
    for f in admin.create_acls(bindings).values():
        f.result(10)
    with_certificate = produce_error(MTLS, topic)
    anonymous = produce_error(SSL, topic)
    report("certificate-principal-meets-acls",
           with_certificate is None and anonymous == KafkaError.TOPIC_AUTHORIZATION_FAILED,
           f"with_certificate={with_certificate} anonymous={anonymous}")


case("certificate-principal-meets-acls", mapped_principal)
sys.exit(1 if failures else 0)
