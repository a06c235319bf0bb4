"""The hostile probe's uploads (issue 28), four at once per case, to a running Quell, while its
resident memory is sampled every 20 ms (scripts/bench-uploads). Each case is an export whose
files unpack to millions of JSON values, or a real export too large to keep, or one that fits.

usage: uploads.py BASE_URL TOKEN INCIDENT_KEY PID
prints one line per case: the upload's size, answers by status, the slowest answer and the peak
resident memory while it was sent; then a RESULT line: the highest peak, and the memory before.
"""
import io
import json
import sys
import threading
import time
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor

base, token, key, pid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
MIB = 1024 * 1024


def rss_mib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def zeros(n):
    return b"[" + b"0," * (n // 2) + b"0]"


def zipped(files):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data in files:
            z.writestr(name, data)
    return out.getvalue()


def messages(text_mib):
    line = json.dumps({"type": "message", "user": "U1", "text": "retry storm " * 800,
                       "ts": "1792620840.000200"}).encode()
    n = text_mib * MIB // len(line) + 1
    return b"[" + b",".join([line] * n) + b"]"


def mentions(mib):
    users = json.dumps([{"id": "U1", "name": "n" * 200}]).encode()
    day = json.dumps([{"type": "message", "user": "U1", "text": "<@U1>" * (mib * MIB // 5),
                       "ts": "1792620840.000200"}]).encode()
    return zipped([("users.json", users), ("ops/2026-10-21.json", day)])


def nested(depth):
    head = b'{"issues":[{"key":"PAY-1","fields":{"summary":"s","created":"2026-01-01T00:00:00Z","description":'
    return head + b'{"type":"doc","content":[' * depth + b"]}" * depth + b"}}]}"


CASES = [
    ("slack: a day file of 64 MiB [0,0,...]", "slack", lambda: zipped([("ops/2026-10-21.json", zeros(64 * MIB))])),
    ("slack: users.json of 64 MiB [0,0,...]", "slack", lambda: zipped([("users.json", zeros(64 * MIB)), ("ops/2026-10-21.json", b"[]")])),
    ("slack: a day file of 190 MiB [0,0,...]", "slack", lambda: zipped([("ops/2026-10-21.json", zeros(190 * MIB))])),
    ("slack: 20 MiB of mentions of a 200-char name", "slack", lambda: mentions(20)),
    ("linear: 24 MiB JSON [0,0,...]", "linear", lambda: zeros(24 * MIB)),
    ("jira: a description nested 800,000 deep", "jira", lambda: nested(800_000)),
    ("slack: 40 MiB of real messages (over 32 MiB)", "slack",
     lambda: zipped([("ops/2026-10-21.json", messages(20)), ("ops/2026-10-22.json", messages(20))])),
    ("slack: 20 MiB of real messages (kept)", "slack", lambda: zipped([("ops/2026-10-21.json", messages(20))])),
]


def post(fmt, body):
    req = urllib.request.Request(
        f"{base}/api/v1/incidents/{key}/evidence/imports?format={fmt}&name=probe",
        data=body, method="POST",
        headers={"authorization": f"Bearer {token}", "content-type": "application/octet-stream"})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except Exception:
        status = 0
    return status, time.monotonic() - t0


before = rss_mib()
highest = 0.0
for name, fmt, make in CASES:
    body = make()
    peak = [rss_mib()]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mib())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: post(fmt, body), range(4)))
    time.sleep(0.3)
    stop.set()
    sampler.join()
    statuses = {}
    for s, _ in answers:
        statuses[s] = statuses.get(s, 0) + 1
    slowest = max(t for _, t in answers)
    highest = max(highest, peak[0])
    shown = " ".join(f"{s}x{n}" for s, n in sorted(statuses.items()))
    print(f"{name:48} {len(body) / 1024:9.0f} KiB  {shown:12} slowest {slowest:5.1f} s  peak {peak[0]:6.1f} MiB")
print(f"RESULT peak_mib={highest:.1f} before_mib={before:.1f}")
