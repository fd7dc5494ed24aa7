"""kafka-python's transactional producer against the broker: commit and abort, read_committed
against read_uncommitted readers, a zombie fenced by a newer instance, and consume-transform-
produce with send_offsets_to_transaction. Prints 'ok   kafka-python/<case>' or 'FAIL ...'."""
import sys, uuid
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from harness import case, finish, report
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

bootstrap = sys.argv[1]

def suffix():
    return uuid.uuid4().hex[:8]

topic = f"kp-txn-{suffix()}"
source, sink = f"kp-txn-in-{suffix()}", f"kp-txn-out-{suffix()}"
admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
admin.create_topics([NewTopic(t, num_partitions=2, replication_factor=1) for t in (topic, source, sink)])
admin.close()

def transactional_producer(transactional_id):
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                             max_block_ms=30000)
    producer.init_transactions()
    return producer

def read_all(topic_name, isolation_level, expected):
    """Every record of the topic in (partition, offset) order, read until `expected` arrived."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation_level,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=3000)
    partitions = [TopicPartition(topic_name, p) for p in range(2)]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    values = []
    for _ in range(20):
        for message in consumer:
            values.append(message.value.decode())
        if len(values) >= expected:
            break
    consumer.close()
    return sorted(values)

@case("txn-commit-and-abort")
def _():
    producer = transactional_producer(f"kp-txn-{suffix()}")
    for round_, commit in (("a", True), ("b", False), ("c", True)):
        producer.begin_transaction()
        for i in range(10):
            producer.send(topic, value=f"{round_}{i}".encode(), partition=i % 2)
        # Written before the abort: the client drops records still unsent when it aborts.
        producer.flush(30)
        producer.commit_transaction() if commit else producer.abort_transaction()
    producer.close()
    committed = sorted([f"a{i}" for i in range(10)] + [f"c{i}" for i in range(10)])
    everything = sorted(committed + [f"b{i}" for i in range(10)])
    seen_committed = read_all(topic, "read_committed", len(committed))
    report("txn-read-committed-sees-committed-only", seen_committed == committed, str(seen_committed))
    seen_all = read_all(topic, "read_uncommitted", len(everything))
    report("txn-read-uncommitted-sees-all", seen_all == everything, str(seen_all))

@case("txn-zombie-fenced")
def _():
    transactional_id = f"kp-zombie-{suffix()}"
    zombie = transactional_producer(transactional_id)
    zombie.begin_transaction()
    zombie.send(topic, value=b"zombie", partition=0).get(timeout=30)
    successor = transactional_producer(transactional_id)  # bumps the epoch, aborts the zombie's transaction
    try:
        zombie.commit_transaction()
        fenced = False
    except KafkaError as e:
        fenced = "Fenced" in type(e).__name__ or "EPOCH" in str(e).upper()
    report("txn-zombie-fenced", fenced, "the older instance committed")
    successor.begin_transaction()
    successor.send(topic, value=b"successor", partition=0)
    successor.commit_transaction()
    successor.close()
    zombie.close(timeout=5)
    seen = read_all(topic, "read_committed", 21)
    report("txn-zombie-write-aborted", "successor" in seen and "zombie" not in seen, str(seen))

@case("txn-consume-transform-produce")
def _():
    plain = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(20):
        plain.send(source, value=f"{i}".encode(), partition=i % 2)
    plain.flush(30)
    plain.close()
    group = f"kp-txn-group-{suffix()}"

    def process(commit, limit):
        """Consumes up to `limit` records, writes them doubled, sends the offsets, commits or aborts."""
        consumer = KafkaConsumer(source, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                                 auto_offset_reset="earliest", isolation_level="read_committed",
                                 consumer_timeout_ms=3000, max_poll_records=limit)
        producer = transactional_producer(f"kp-ctp-{group}")
        records = []
        for _ in range(20):
            for batch in consumer.poll(timeout_ms=1000).values():
                records.extend(batch)
            if len(records) >= limit:
                break
        records = records[:limit]
        producer.begin_transaction()
        offsets = {}
        for record in records:
            producer.send(sink, value=str(2 * int(record.value)).encode(), partition=record.partition)
            offsets[TopicPartition(source, record.partition)] = OffsetAndMetadata(record.offset + 1, "", -1)
        producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
        producer.flush(30)
        producer.commit_transaction() if commit else producer.abort_transaction()
        producer.close()
        consumer.close(autocommit=False)
        return len(records)

    processed = process(True, 8)
    process(False, 6)   # aborted: its output and its offsets must vanish
    process(True, 20)   # resumes at the committed offsets, takes the rest
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    committed = sum(consumer.committed(TopicPartition(source, p)) or 0 for p in range(2))
    consumer.close()
    output = read_all(sink, "read_committed", 20)
    expected = sorted(str(2 * i) for i in range(20))
    report("txn-consume-transform-produce-exactly-once", processed == 8 and output == expected,
           f"first round {processed}, output {output}")
    report("txn-offsets-committed-with-transaction", committed == 20, f"committed {committed}")

finish()
