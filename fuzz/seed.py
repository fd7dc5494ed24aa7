#!/usr/bin/env python3
"""Builds the fuzz targets' seed corpora (fuzz/seeds/<target>/) from real client traffic.

A broker (the debug build, ../target/debug/sluice) runs behind a recording proxy that keeps
every request frame a client sends; kcat (librdkafka) then lists metadata, produces with
every codec, consumes, joins a group and commits, and looks up offsets by time. Afterwards
the broker's data directory gives the other corpora: record batches and whole segments of
the topics, metadata log entries, and the coordinators' records of __consumer_offsets.

Run from the repository root: python3 fuzz/seed.py  (needs kcat). Deterministic enough to
rerun; files are named by content hash, so reruns add only what is new.
"""
import hashlib
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")


def save(target, data):
    directory = os.path.join(SEEDS, target)
    os.makedirs(directory, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def pipe(src, dst, record):
    try:
        while True:
            if record:
                size = read_exact(src, 4)
                if size is None:
                    break
                body = read_exact(src, struct.unpack(">i", size)[0])
                if body is None:
                    break
                save("request_decode", body)
                save("request_dispatch", body)
                dst.sendall(size + body)
            else:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def proxy(listen_port, broker_port, stop):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(64)
    server.settimeout(0.2)
    while not stop.is_set():
        try:
            client, _ = server.accept()
        except socket.timeout:
            continue
        upstream = socket.create_connection(("127.0.0.1", broker_port))
        threading.Thread(target=pipe, args=(client, upstream, True), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client, False), daemon=True).start()
    server.close()


def kcat(bootstrap, *args, data=None, timeout=30):
    subprocess.run(["kcat", "-b", bootstrap, *args], input=data, timeout=timeout,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def varint(buf, at):
    value = shift = 0
    while True:
        b = buf[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1), at


def batches(data):
    at = 0
    while at + 12 <= len(data):
        length = struct.unpack(">i", data[at + 8:at + 12])[0]
        if length < 49 or at + 12 + length > len(data):
            return
        yield data[at:at + 12 + length]
        at += 12 + length


def records(batch):
    """Key and value of each record of an uncompressed batch."""
    if struct.unpack(">h", batch[21:23])[0] & 7:
        return
    count = struct.unpack(">i", batch[57:61])[0]
    at = 61
    for _ in range(count):
        length, at = varint(batch, at)
        end = at + length
        at += 1
        _, at = varint(batch, at)
        _, at = varint(batch, at)
        fields = []
        for _ in range(2):
            n, at = varint(batch, at)
            fields.append(batch[at:at + n] if n >= 0 else None)
            at += max(n, 0)
        yield fields
        at = end


def main():
    binary = os.path.join(ROOT, "target", "debug", "sluice")
    if not os.path.exists(binary):
        sys.exit("build the broker first (cargo build)")
    data_dir = tempfile.mkdtemp(prefix="sluice-seed-")
    broker_port, proxy_port = free_port(), free_port()
    broker = subprocess.Popen([
        binary, "--override", f"listeners=PLAINTEXT://127.0.0.1:{broker_port}",
        "--override", f"advertised.listeners=PLAINTEXT://127.0.0.1:{proxy_port}",
        "--override", f"log.dirs={data_dir}", "--override", "log.segment.bytes=65536",
    ], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()
    threading.Thread(target=proxy, args=(proxy_port, broker_port, stop), daemon=True).start()
    bootstrap = f"127.0.0.1:{proxy_port}"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", broker_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        kcat(bootstrap, "-L")
        lines = "".join(f"key{i}:value {i} " + "x" * (i % 50) + "\n" for i in range(300))
        for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
            kcat(bootstrap, "-P", "-t", f"seed-{codec}", "-K:", "-z", codec, data=lines.encode())
        kcat(bootstrap, "-P", "-t", "seed-keyed", "-K:", "-X", "enable.idempotence=true",
             data=lines.encode())
        for codec in ["none", "zstd"]:
            kcat(bootstrap, "-C", "-t", f"seed-{codec}", "-o", "beginning", "-e")
            kcat(bootstrap, "-Q", "-t", f"seed-{codec}:0:1000")
        kcat(bootstrap, "-G", "seed-group", "-o", "beginning", "-e", "-X",
             "enable.auto.commit=true", "-X", "auto.commit.interval.ms=100", "seed-none",
             timeout=20)
    finally:
        stop.set()
        broker.terminate()
        broker.wait(timeout=60)
    for name in sorted(os.listdir(data_dir)):
        path = os.path.join(data_dir, name)
        if not os.path.isdir(path):
            continue
        for segment in sorted(f for f in os.listdir(path) if f.endswith(".log")):
            data = open(os.path.join(path, segment), "rb").read()
            stem = segment[:-4]
            index = b""
            for ext in [".index", ".timeindex"]:
                if os.path.exists(os.path.join(path, stem + ext)):
                    index += open(os.path.join(path, stem + ext), "rb").read()
            if name.startswith("seed-") and len(data) < 60000:
                split = len(data)
                save("segment_recovery", struct.pack(">H", split) + data + index)
            for batch in batches(data):
                if name.startswith("seed-"):
                    save("record_batch", batch)
                for key, value in records(batch):
                    if name.startswith("__cluster_metadata") and value:
                        save("metadata_replay", struct.pack(">H", len(value)) + value)
                    if name.startswith("__consumer_offsets"):
                        if key:
                            save("internal_records", b"\x00" + key)
                        if value:
                            save("internal_records", b"\x01" + value)
                            save("internal_records", b"\x02" + value)
    for config in os.listdir(os.path.join(ROOT, "config")):
        if config.endswith(".properties"):
            save("properties", open(os.path.join(ROOT, "config", config), "rb").read())
    for target in sorted(os.listdir(SEEDS)):
        print(f"{target}: {len(os.listdir(os.path.join(SEEDS, target)))} seeds")


if __name__ == "__main__":
    main()
