"""Stand-in for kafka-python's test/service.py, which its published sdist does not ship but
test/integration/fixtures.py imports. Against an external broker (KAFKA_URI) the fixtures only
construct ExternalService; spawning a broker is not something this shim can do."""


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
    def __init__(self, *args, **kwargs):
        raise RuntimeError("the compat suite runs kafka-python's tests against an external broker only")
