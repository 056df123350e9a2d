#!/usr/bin/env python3
"""confluent-kafka (librdkafka) side of Sluice's Kafka interop tests (issue 14).

    interop.py produce --bootstrap B --topic T --count N [--prefix P]
    interop.py consume --bootstrap B --topic T --group G [--max-ms MS]
    interop.py create  --bootstrap B --topic T [--partitions N] [--replication-factor R]
    interop.py delete  --bootstrap B --topic T

produce is idempotent (enable.idempotence=true, acks=all); record i has key
"key-<i>", value "<prefix>-<i>" and headers src=python, i=<i>. consume is a
group member with the cooperative-sticky assignor (incremental rebalances),
reading from the earliest offset and committing synchronously after each
record batch; it stops when its stdin closes (or after --max-ms), commits,
prints the committed offsets and leaves the group. Results are one JSON object
per line on stdout (an "event" field says which); diagnostics go to stderr.
Exit status 0 on success, 1 on error.
"""

import argparse
import json
import sys
import threading
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

_out = threading.Lock()


def emit(obj):
    with _out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def fail(message):
    emit({"event": "error", "message": message})
    print("interop.py:", message, file=sys.stderr)
    sys.exit(1)


def produce(a):
    p = Producer({"bootstrap.servers": a.bootstrap, "enable.idempotence": True, "acks": "all"})
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
            return
        emit({"event": "produced", "partition": msg.partition(), "offset": msg.offset(),
              "key": msg.key().decode(), "value": msg.value().decode()})

    for i in range(a.count):
        for _ in range(1000):  # bounded: BufferError only while the local queue is full
            try:
                p.produce(a.topic, key=f"key-{i}", value=f"{a.prefix}-{i}",
                          headers=[("src", b"python"), ("i", str(i).encode())], on_delivery=report)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(60)
    if left or errors:
        fail(f"produce: {left} undelivered, errors: {errors[:3]}")
    emit({"event": "done", "produced": a.count})


def consume(a):
    if not a.group:
        fail("--group is required")
    c = Consumer({
        "bootstrap.servers": a.bootstrap, "group.id": a.group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "partition.assignment.strategy": "cooperative-sticky",
    })
    stop = threading.Event()

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(256):
                pass
        finally:
            stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()

    def on_assign(consumer, parts):
        emit({"event": "assigned", "partitions": [tp.partition for tp in parts]})

    def on_revoke(consumer, parts):
        emit({"event": "revoked", "partitions": [tp.partition for tp in parts]})

    c.subscribe([a.topic], on_assign=on_assign, on_revoke=on_revoke)
    deadline = time.monotonic() + a.max_ms / 1000
    consumed = 0
    while not stop.is_set() and time.monotonic() < deadline:
        msgs = c.consume(num_messages=500, timeout=0.2)
        good = []
        for m in msgs:
            if m.error():
                print("interop.py: consume:", m.error(), file=sys.stderr)
                continue
            good.append(m)
            hs = [{"key": k, "value": None if v is None else v.decode()} for k, v in (m.headers() or [])]
            emit({"event": "record", "partition": m.partition(), "offset": m.offset(),
                  "timestamp": m.timestamp()[1], "key": m.key().decode() if m.key() is not None else None,
                  "value": m.value().decode() if m.value() is not None else None, "headers": hs})
            consumed += 1
        if good:
            try:
                c.commit(asynchronous=False)
            except KafkaException as e:  # a rebalance in between: the next commit covers it
                print("interop.py: commit:", e, file=sys.stderr)
    try:
        c.commit(asynchronous=False)
    except KafkaException as e:
        if e.args[0].code() != -168:  # _NO_OFFSET: nothing consumed since the last commit
            print("interop.py: final commit:", e, file=sys.stderr)
    assignment = c.assignment()
    committed = c.committed(assignment, timeout=15) if assignment else []
    emit({"event": "committed", "offsets": {str(tp.partition): tp.offset for tp in committed if tp.offset >= 0}})
    c.close()
    emit({"event": "done", "consumed": consumed})


def admin(a, create):
    adm = AdminClient({"bootstrap.servers": a.bootstrap})
    if create:
        futures = adm.create_topics([NewTopic(a.topic, num_partitions=a.partitions, replication_factor=a.replication_factor)],
                                    operation_timeout=30)
    else:
        futures = adm.delete_topics([a.topic], operation_timeout=30)
    try:
        futures[a.topic].result(timeout=60)
    except Exception as e:  # noqa: BLE001 — the error is the result
        fail(f"{'create' if create else 'delete'} {a.topic}: {e}")
    if create:
        emit({"event": "created", "topic": a.topic, "partitions": a.partitions, "replicationFactor": a.replication_factor})
    else:
        emit({"event": "deleted", "topic": a.topic})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["produce", "consume", "create", "delete"])
    ap.add_argument("--bootstrap", default="127.0.0.1:9092")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group")
    ap.add_argument("--prefix", default="python")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--replication-factor", type=int, default=3)
    ap.add_argument("--max-ms", type=int, default=120000)
    a = ap.parse_args()
    {"produce": produce, "consume": consume}.get(a.command, lambda x: admin(x, a.command == "create"))(a)


if __name__ == "__main__":
    main()
