"""Stand-in for kafka-python's test/service.py, which its published sdist does not ship but
test/integration/fixtures.py imports: ExternalService for a broker given with KAFKA_URI, and
SpawnedService, which runs the broker command the fixture builds (with compat's shim KAFKA_ROOT,
Sluice) as a child process, keeps its output lines for wait_for() and dump_logs(), and stops it
with SIGTERM (SIGKILL after 10 s)."""

import re
import subprocess
import sys
import threading
import time


class ExternalService:
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def open(self):
        pass

    def close(self):
        pass

    def start(self):
        pass

    def stop(self):
        pass

    def dump_logs(self):
        pass

    def wait_for(self, pattern, timeout=30):
        return True


class SpawnedService:
    def __init__(self, args=None, env=None):
        self.args = [str(a) for a in args]
        self.env = env
        self.process = None
        self.lines = []
        self.lock = threading.Lock()
        self.reader = None

    def start(self):
        self.process = subprocess.Popen(
            self.args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.process.stdout:
            with self.lock:
                self.lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))

    def wait_for(self, pattern, timeout=30):
        deadline = time.time() + timeout
        regex = re.compile(pattern)
        seen = 0
        while True:
            with self.lock:
                lines = self.lines[seen:]
                seen = len(self.lines)
            if any(regex.search(line) for line in lines):
                return True
            if time.time() >= deadline or (self.process.poll() is not None and not self.reader.is_alive()):
                return False
            time.sleep(0.05)

    def dump_logs(self):
        with self.lock:
            lines = list(self.lines)
        sys.stderr.write("\n".join(lines[-200:]) + "\n")

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.reader is not None:
            self.reader.join(5)
