"""confluent-kafka (librdkafka inside) against the broker: every codec, idempotence, groups with
commits and rebalances, AdminClient, offsets for times, watermarks.
Prints 'ok   confluent-kafka/<case>' or 'FAIL confluent-kafka/<case>: <detail>'."""
import sys, time, uuid
from confluent_kafka import Consumer, Producer, TopicPartition, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic, NewPartitions, ConfigResource, ConfigEntry, AlterConfigOpType

bootstrap = sys.argv[1]
failures = 0
base = {"bootstrap.servers": bootstrap}

def report(name, ok, detail=""):
    global failures
    if ok:
        print(f"ok   confluent-kafka/{name}", flush=True)
    else:
        failures += 1
        print(f"FAIL confluent-kafka/{name}: {detail}", flush=True)

def case(fn):
    try:
        fn()
    except Exception as e:  # a crashed case is a failed case
        report(fn.__name__.replace("_", "-"), False, repr(e))
    return fn

def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"

admin = AdminClient(base)

def create(topic, partitions=1, config=None):
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1, config=config or {})])
    for f in futures.values():
        f.result(15)

def consume_assigned(topic, partitions, count, timeout=30):
    consumer = Consumer({**base, "group.id": unique("reader"), "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got, deadline = [], time.time() + timeout
    while len(got) < count and time.time() < deadline:
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            got.append(m)
    consumer.close()
    return got

@case
def codecs():
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
        topic = unique(f"codec-{codec}")
        create(topic)
        p = Producer({**base, "compression.type": codec, "linger.ms": 5, "enable.idempotence": False})
        for i in range(200):
            p.produce(topic, key=f"k{i}".encode(), value=f"{codec}-{i}".encode() * 3, headers=[("h", b"v")])
        p.flush(30)
        got = consume_assigned(topic, 1, 200)
        values = [m.value().decode() for m in got]
        report(f"produce-consume-{codec}", values == [f"{codec}-{i}" * 3 for i in range(200)] and got[0].headers() == [("h", b"v")], f"{len(values)} values")

@case
def idempotent_producer():
    topic = unique("idem")
    create(topic)
    p = Producer({**base, "enable.idempotence": True, "message.timeout.ms": 10000})
    errors = []
    p.produce(topic, value=b"x", on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    report("idempotent-producer", errors == [None], str(errors))

@case
def group_commits_and_rebalance():
    topic, group = unique("grp"), unique("group")
    create(topic, 4)
    p = Producer({**base, "linger.ms": 5})
    for i in range(400):
        p.produce(topic, value=f"g{i}".encode(), partition=i % 4)
    p.flush(30)
    conf = {**base, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
    c1, c2 = Consumer(conf), Consumer(conf)
    c1.subscribe([topic]); c2.subscribe([topic])
    seen, deadline = {}, time.time() + 60
    while sum(len(v) for v in seen.values()) < 400 and time.time() < deadline:
        for name, c in (("c1", c1), ("c2", c2)):
            m = c.poll(0.2)
            if m is not None and not m.error():
                seen.setdefault(name, []).append(m.value().decode())
                c.commit(message=m, asynchronous=False)
    values = sorted(v for vs in seen.values() for v in vs)
    report("group-consume-exactly-once", values == sorted(f"g{i}" for i in range(400)), f"{len(values)} values, {len(set(values))} distinct")
    report("group-rebalanced-across-two", len(seen) == 2 and len(c1.assignment()) == 2 and len(c2.assignment()) == 2, f"{[len(c1.assignment()), len(c2.assignment())]}")
    committed = c1.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)
    report("group-committed-offsets", [tp.offset for tp in committed] == [100] * 4, str([tp.offset for tp in committed]))
    c2.close()
    deadline = time.time() + 30
    while len(c1.assignment()) != 4 and time.time() < deadline:
        c1.poll(0.2)
    report("group-rebalance-after-leave", len(c1.assignment()) == 4, str(c1.assignment()))
    c1.close()
    groups = admin.list_consumer_groups().result(10)
    report("admin-list-groups", group in [g.group_id for g in groups.valid], str([g.group_id for g in groups.valid]))
    described = admin.describe_consumer_groups([group])[group].result(10)
    report("admin-describe-group", str(described.state).endswith("EMPTY"), str(described.state))
    admin.delete_consumer_groups([group])[group].result(10)
    report("admin-delete-group", group not in [g.group_id for g in admin.list_consumer_groups().result(10).valid])

@case
def admin_topics_configs_records():
    topic = unique("adm")
    create(topic, 2, {"retention.ms": "3600000"})
    metadata = admin.list_topics(timeout=10)
    report("admin-create-topic", topic in metadata.topics and len(metadata.topics[topic].partitions) == 2)
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(10)
    report("admin-create-partitions", len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 3)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(10)
    report("admin-describe-configs", configs["retention.ms"].value == "3600000" and "segment.bytes" in configs, str(configs.get("retention.ms")))
    alter = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[ConfigEntry("retention.ms", "1234", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([alter])[alter].result(10)
    configs = admin.describe_configs([resource])[resource].result(10)
    report("admin-incremental-alter-configs", configs["retention.ms"].value == "1234", configs["retention.ms"].value)
    p = Producer(base)
    for i in range(30):
        p.produce(topic, value=b"r", partition=0)
    p.flush(10)
    deleted = admin.delete_records([TopicPartition(topic, 0, 10)])
    low = list(deleted.values())[0].result(10)
    report("admin-delete-records", low.low_watermark == 10, str(low.low_watermark))
    c = Consumer({**base, "group.id": unique("wm")})
    report("watermarks", c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10) == (10, 30), str(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)))
    c.close()
    admin.delete_topics([topic])[topic].result(10)
    report("admin-delete-topic", topic not in admin.list_topics(timeout=10).topics)

@case
def offsets_for_times():
    topic = unique("times")
    create(topic)
    p = Producer(base)
    base_ts = 1_600_000_000_000
    for i in range(50):
        p.produce(topic, value=b"t", timestamp=base_ts + i * 10)
    p.flush(10)
    c = Consumer({**base, "group.id": unique("times")})
    found = c.offsets_for_times([TopicPartition(topic, 0, base_ts + 105)], timeout=10)
    report("offsets-for-times", found[0].offset == 11, str(found))
    c.close()

sys.exit(1 if failures else 0)
