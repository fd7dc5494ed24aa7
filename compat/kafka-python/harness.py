"""What the kafka-python case scripts share: each case prints 'ok   kafka-python/<case>' or
'FAIL kafka-python/<case>: detail', and the script exits non-zero if any failed."""
import sys

suite = "kafka-python"
failures = 0

def report(name, ok, detail=""):
    global failures
    if ok:
        print(f"ok   {suite}/{name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {suite}/{name}: {detail}", flush=True)

def case(name):
    """Runs the decorated function at once; a crash is a failed case, not a crashed suite."""
    def wrap(fn):
        try:
            fn()
        except Exception as e:
            report(name, False, repr(e))
        return fn
    return wrap

def finish():
    sys.exit(1 if failures else 0)
