"""Many clients at once, each posting one large body to a Quell webhook, while the server's
resident memory is sampled every 50 ms (scripts/bench-scale, memory). Kinds of body, about
1 MiB each: `alerts` (a valid Alertmanager notification of ~1,300 alerts with 7 labels and
2 annotations, every one new), `numbers` (a JSON array of 500,000 numbers: the most JSON values
per byte, the worst case for parsing) and `text` (one long string).

usage: bodies.py HOST PORT PATH KEY PID CLIENTS KIND [KIND ...]
prints one line per kind: answers by status, the slowest answer, the peak resident memory
while that kind was sent; then a RESULT line: the highest peak and the resident memory 3 s
after the last answer.
"""
import asyncio
import json
import sys
import threading
import time

host, port, path, key, pid, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
kinds = sys.argv[7:]


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


peak = [0]
stop = threading.Event()


def sample():
    while not stop.is_set():
        peak[0] = max(peak[0], rss_kib())
        time.sleep(0.05)


def body(kind, n, run):
    if kind == "alerts":
        alerts, size, j = [], 0, 0
        while size < 1_000_000:
            fp = f"bodies-{run}-{n}-{j}"
            a = {"status": "firing",
                 "labels": {"alertname": "LargePost", "instance": f"{fp}:9100", "job": "node",
                            "severity": "warning", "service": "payments-gateway",
                            "namespace": "payments", "cluster": "eu-west-1"},
                 "annotations": {"summary": f"LargePost on {fp}", "description": "d" * 600},
                 "startsAt": "2026-11-30T06:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
                 "generatorURL": "http://prometheus:9090/graph", "fingerprint": fp}
            size += len(json.dumps(a)) + 1
            alerts.append(a)
            j += 1
        return json.dumps({"version": "4", "groupKey": '{}:{alertname="LargePost"}', "truncatedAlerts": 0,
                           "status": "firing", "receiver": "quell", "groupLabels": {"alertname": "LargePost"},
                           "commonLabels": {"alertname": "LargePost"}, "commonAnnotations": {},
                           "externalURL": "http://alertmanager:9093", "alerts": alerts}).encode()
    if kind == "numbers":
        return b"[" + b"1," * 499_999 + b"1]"
    if kind == "text":
        return json.dumps({"text": "t" * 1_000_000}).encode()
    raise SystemExit(f"unknown kind {kind}")


async def post(b):
    began = time.monotonic()
    try:
        r, w = await asyncio.open_connection(host, port)
        w.write((f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                 f"Authorization: Bearer {key}\r\nContent-Length: {len(b)}\r\nConnection: close\r\n\r\n").encode())
        w.write(b)
        await w.drain()
        answer = await r.read()
        w.close()
        status = answer.split(b" ", 2)[1].decode() if answer else "closed"
    except (ConnectionError, OSError) as e:
        status = type(e).__name__
    return status, time.monotonic() - began


async def main():
    threading.Thread(target=sample, daemon=True).start()
    run = int(time.time())
    highest = 0
    for kind in kinds:
        bodies = [body(kind, n, run) for n in range(clients)]
        peak[0] = rss_kib()
        results = await asyncio.gather(*(post(b) for b in bodies))
        codes = {}
        for status, _ in results:
            codes[status] = codes.get(status, 0) + 1
        slowest = max(t for _, t in results)
        print(f"{kind}: {clients} x {len(bodies[0]):,} bytes, answers "
              + " ".join(f"{k}x{v}" for k, v in sorted(codes.items()))
              + f", slowest {slowest:.1f} s, peak {peak[0] / 1024:.1f} MiB")
        highest = max(highest, peak[0])
    await asyncio.sleep(3)
    stop.set()
    print(f"RESULT peak_mib={highest / 1024:.1f} after_mib={rss_kib() / 1024:.1f}")


asyncio.run(main())
