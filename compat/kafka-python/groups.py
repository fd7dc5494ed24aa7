"""kafka-python against the broker: admin, produce, a consumer group splitting partitions,
commits, and resuming from committed offsets. Prints 'ok   kafka-python/<case>' or 'FAIL ...'."""
import sys, threading, time, uuid
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from harness import case, finish, report

bootstrap = sys.argv[1]

topic = f"kp-{uuid.uuid4().hex[:8]}"
group = f"kp-group-{uuid.uuid4().hex[:8]}"
count = 300

@case("admin-create-topic")
def _():
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    report("admin-create-topic", topic in admin.list_topics())
    admin.close()

@case("produce")
def _():
    # kafka-python 3 producers are idempotent by default (InitProducerId, sequence numbers).
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    futures = [producer.send(topic, value=f"v{i}".encode(), key=f"k{i}".encode(), partition=i % 3) for i in range(count)]
    producer.flush(30)
    offsets = [f.get(timeout=30).offset for f in futures]
    report("produce", sorted(offsets) == sorted([i // 3 for i in range(count)]), str(offsets[:5]))
    producer.close()

received = {}
lock = threading.Lock()

def member(name, stop):
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=1000,
                             consumer_timeout_ms=500)
    while not stop.is_set():
        for message in consumer:
            with lock:
                received.setdefault(name, []).append((message.partition, message.value.decode()))
        consumer.commit()
    consumer.commit()
    consumer.close()

@case("group-split-and-commit")
def _():
    stop = threading.Event()
    threads = [threading.Thread(target=member, args=(f"m{i}", stop)) for i in range(2)]
    for t in threads:
        t.start()
    deadline = time.time() + 60
    while time.time() < deadline:
        with lock:
            total = sum(len(v) for v in received.values())
        if total >= count:
            break
        time.sleep(0.2)
    time.sleep(1)
    stop.set()
    for t in threads:
        t.join(30)
    values = sorted(v for msgs in received.values() for _, v in msgs)
    report("group-split-and-commit", values == sorted(f"v{i}" for i in range(count)),
           f"{len(values)} values, {len(set(values))} distinct")
    partitions = [set(p for p, _ in msgs) for msgs in received.values()]
    report("group-members-own-partitions", len(partitions) == 2 and not (partitions[0] & partitions[1]), str(partitions))

@case("group-resume-from-commit")
def _():
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=3000)
    leftover = [m for m in consumer]
    committed = {p: consumer.committed(TopicPartition(topic, p)) for p in range(3)}
    consumer.close()
    report("group-resume-from-commit", leftover == [], f"{len(leftover)} re-read")
    report("offset-fetch", committed == {0: 100, 1: 100, 2: 100}, str(committed))

@case("admin-describe-and-delete-group")
def _():
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    def names():
        return [g["group_id"] if isinstance(g, dict) else g[0] for g in admin.list_groups()]
    report("admin-list-groups", group in names(), str(names()))
    described = admin.describe_groups([group])[group]
    state = described["group_state"]
    report("admin-describe-group", state == "Empty", str(described))
    admin.delete_groups([group])
    report("admin-delete-group", group not in names(), str(names()))
    admin.close()

finish()
