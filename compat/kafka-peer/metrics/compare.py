#!/usr/bin/env python3
"""Compares two Prometheus 0.0.4 scrapes, Kafka's (through the JMX exporter) and Sluice's, after
the same workload: the families of issue 27's list, their types and label names, the counters
that must agree, and every family Kafka has that Sluice does not. Exit 1 on a mismatch."""
import re
import sys

REQUIRED = [
    r"kafka_server_brokertopicmetrics_(messagesin|bytesin|bytesout|bytesrejected|failedproducerequests|failedfetchrequests|totalproducerequests|totalfetchrequests)_total",
    r"kafka_network_requestmetrics_(requests|errors)_total",
    r"kafka_network_requestmetrics_(totaltimems|requestqueuetimems|localtimems|remotetimems|responsesendtimems)(_count_total)?",
    r"kafka_server_replicamanager_(partitioncount|leadercount|underreplicatedpartitions|underminisrpartitioncount|offlinereplicacount|isrshrinks_total|isrexpands_total)",
    r"kafka_controller_kafkacontroller_(activecontrollercount|offlinepartitionscount|globaltopiccount|globalpartitioncount|activebrokercount|fencedbrokercount)",
    r"kafka_log_log_(size|logendoffset|logstartoffset|numlogsegments)",
    r"kafka_coordinator_group_groupmetadatamanager_numgroups.*",
    r"kafka_network_socketserver_memorypool(available|used)",
    r"kafka_server_raft_metrics_(current_leader|current_epoch|current_state|number_of_voters)",
    r"process_(cpu_seconds_total|resident_memory_bytes|open_fds)",
]

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(path):
    """{family: (type, {label names}, {frozenset(labels): value})}"""
    families = {}
    with open(path) as f:
        for line in f:
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split()
                families.setdefault(name, [kind, set(), {}])[0] = kind
                continue
            if line.startswith("#") or not line.strip():
                continue
            m = SAMPLE.match(line)
            if not m:
                continue
            name, labels = m.group(1), dict(LABEL.findall(m.group(3) or ""))
            family = families.setdefault(name, ["untyped", set(), {}])
            family[1].update(labels)
            family[2][frozenset(labels.items())] = float(m.group(4))
    return families


def value(families, name, **labels):
    family = families.get(name)
    if not family:
        return None
    return family[2].get(frozenset(labels.items()))


def total(families, name, **labels):
    family = families.get(name)
    if not family:
        return None
    want = set(labels.items())
    return sum(v for k, v in family[2].items() if want <= set(k))


def main(kafka_path, sluice_path):
    kafka, sluice = parse(kafka_path), parse(sluice_path)
    failures = 0
    print("== families of the issue's list (Kafka has them)")
    for pattern in REQUIRED:
        for name in sorted(n for n in kafka if re.fullmatch(pattern, n)):
            kind, labels, _ = kafka[name]
            ours = sluice.get(name)
            if ours is None:
                verdict = "MISSING"
            elif ours[0] != kind:
                verdict = f"TYPE {ours[0]} (Kafka: {kind})"
            elif ours[1] != labels and ours[2]:
                verdict = f"LABELS {sorted(ours[1])} (Kafka: {sorted(labels)})"
            else:
                verdict = "ok"
            if verdict != "ok":
                failures += 1
            print(f"  {verdict:8} {name} {kind} {','.join(sorted(labels)) or '-'}")
    print("== counters that must agree on the workload")
    checks = [
        ("messages in, wl-a", "kafka_server_brokertopicmetrics_messagesin_total", {"topic": "wl-a"}, value),
        ("bytes in, wl-a", "kafka_server_brokertopicmetrics_bytesin_total", {"topic": "wl-a"}, value),
        ("bytes out, wl-a", "kafka_server_brokertopicmetrics_bytesout_total", {"topic": "wl-a"}, value),
        ("produce requests, wl-a", "kafka_server_brokertopicmetrics_totalproducerequests_total", {"topic": "wl-a"}, value),
        ("Produce requests", "kafka_network_requestmetrics_requests_total", {"request": "Produce"}, total),
        ("OffsetCommit requests", "kafka_network_requestmetrics_requests_total", {"request": "OffsetCommit"}, total),
        ("SyncGroup requests", "kafka_network_requestmetrics_requests_total", {"request": "SyncGroup"}, total),
        ("LeaveGroup requests", "kafka_network_requestmetrics_requests_total", {"request": "LeaveGroup"}, total),
        ("Produce errors NONE", "kafka_network_requestmetrics_errors_total", {"request": "Produce", "error": "NONE"}, value),
        ("partitions hosted", "kafka_server_replicamanager_partitioncount", {}, value),
        ("partitions led", "kafka_server_replicamanager_leadercount", {}, value),
        ("topics", "kafka_controller_kafkacontroller_globaltopiccount", {}, value),
        ("partitions", "kafka_controller_kafkacontroller_globalpartitioncount", {}, value),
        ("log end offsets, wl-a", "kafka_log_log_logendoffset", {"topic": "wl-a"}, total),
        ("log sizes, wl-a", "kafka_log_log_size", {"topic": "wl-a"}, total),
    ]
    for label, name, labels, get in checks:
        k, s = get(kafka, name, **labels), get(sluice, name, **labels)
        agree = k is not None and k == s
        failures += 0 if agree else 1
        print(f"  {'ok' if agree else 'DIFFERS':8} {label}: Kafka {k}, Sluice {s}")
    print("== requests per API (information: retries and timing differ)")
    for request in sorted({dict(k).get("request") for k in kafka.get("kafka_network_requestmetrics_requests_total", [0, 0, {}])[2]}):
        k = total(kafka, "kafka_network_requestmetrics_requests_total", request=request)
        s = total(sluice, "kafka_network_requestmetrics_requests_total", request=request)
        print(f"  {request}: Kafka {k:g}, Sluice {s:g}")
    missing = sorted(n for n in kafka if n.startswith("kafka_") and n not in sluice)
    print(f"== families Kafka has and Sluice does not: {len(missing)} of {sum(1 for n in kafka if n.startswith('kafka_'))}")
    groups = {}
    for name in missing:
        prefix = "_".join(name.split("_")[:3])
        groups.setdefault(prefix, []).append(name)
    for prefix, names in sorted(groups.items()):
        print(f"  {prefix}_*: {len(names)}")
        for name in names:
            print(f"    {name}")
    extra = sorted(n for n in sluice if n not in kafka)
    print(f"== families Sluice has and Kafka's exporter does not: {len(extra)}")
    for name in extra:
        print(f"    {name}")
    print(f"compare: {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
