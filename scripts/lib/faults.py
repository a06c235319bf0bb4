"""The clients of scripts/faults: they send, count what Quell acknowledged, and check what the
database holds. Standard library only; loopback only; every case bounded in time and requests."""

import http.client
import json
import subprocess
import sys
import threading
import time


def request(port, method, path, headers=None, body=None, timeout=5.0):
    """(status, headers, body, seconds); status 0 when no answer came (refused, reset, timeout)."""
    began = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        res = conn.getresponse()
        payload = res.read()
        conn.close()
        headers = {k.lower(): v for k, v in res.getheaders()}
        return res.status, headers, payload, time.monotonic() - began
    except (OSError, http.client.HTTPException):
        return 0, {}, b"", time.monotonic() - began


def psql(dsn, sql):
    out = subprocess.run(["psql", dsn, "-Atqc", sql], check=True, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if line]


def alert_body(group, fingerprint):
    labels = {"alertname": group, "instance": f"{fingerprint}:9100", "severity": "critical"}
    return {
        "version": "4", "status": "firing", "receiver": "quell",
        "groupKey": f'{{}}:{{alertname="{group}"}}',
        "groupLabels": {"alertname": group}, "commonLabels": {"alertname": group},
        "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "truncatedAlerts": 0,
        "alerts": [{
            "status": "firing", "labels": labels,
            "annotations": {"summary": f"{group} on {fingerprint}"},
            "startsAt": "2026-11-30T00:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "fingerprint": fingerprint,
        }],
    }


def storm(front, hook_id, key, groups, seconds, clients, max_requests):
    """Posts one new alert per request from `clients` threads for `seconds` (at most
    `max_requests` in all); returns (sent, acknowledged fingerprints by group, answers)."""
    acked, answers, lock = {}, {}, threading.Lock()
    sent = [0]
    stop = time.monotonic() + seconds

    def client(c):
        n = 0
        while time.monotonic() < stop:
            with lock:
                if sent[0] >= max_requests:
                    return
                sent[0] += 1
            group = f"storm-{(c + n) % groups}"
            fp = f"c{c}-n{n}"
            n += 1
            status, _, _, _ = request(front, "POST", f"/hooks/alertmanager/{hook_id}",
                                      {"Authorization": f"Bearer {key}"}, alert_body(group, fp))
            with lock:
                answers[status] = answers.get(status, 0) + 1
                if 200 <= status < 300:
                    acked.setdefault(group, set()).add(fp)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sent[0], acked, answers


def case_storm(args):
    front, dsn, token = int(args[0]), args[1], args[2]
    seconds, clients, groups = float(args[3]), int(args[4]), int(args[5])
    auth = {"Authorization": f"Bearer {token}"}
    status, _, body, _ = request(front, "POST", "/api/v1/integrations", auth,
                                 {"name": f"faults {time.time()}", "format": "alertmanager"})
    assert status == 201, (status, body)
    hook = json.loads(body)
    sent, acked, answers = storm(front, hook["id"], hook["key"], groups, seconds, clients, 200_000)
    ack_total = sum(len(v) for v in acked.values())
    print(f"  sent {sent} alerts in {groups} groups; answers {dict(sorted(answers.items()))}")
    stored = set(psql(dsn, f"select dedup_key from alerts where integration_id = '{hook['id']}'"))
    missing = [fp for fps in acked.values() for fp in fps if fp not in stored]
    dupes = psql(dsn, f"select count(*) - count(distinct dedup_key) from alerts "
                      f"where integration_id = '{hook['id']}'")[0]
    per_group = psql(dsn, f"select g.group_key, count(distinct a.incident_id) from alerts a "
                          f"join alert_groups g on g.id = a.group_id "
                          f"where a.integration_id = '{hook['id']}' group by g.group_key")
    split = [row for row in per_group if not row.endswith("|1")]
    # Work left claimed by a killed replica and never taken up by another: timers, escalation
    # steps and messages due more than 30 s ago and still pending.
    stuck = psql(dsn, "select (select count(*) from sla_timers where state = 'pending' "
                      "and due_at < now() - interval '30 seconds') + (select count(*) from escalations "
                      "where state = 'pending' and due_at < now() - interval '30 seconds') + "
                      "(select count(*) from notifications where state = 'pending' "
                      "and next_attempt_at < now() - interval '30 seconds')")[0]
    print(f"  acknowledged {ack_total}, stored {len(stored)}, acknowledged but missing {len(missing)}, "
          f"duplicates {dupes}, groups with more than one incident {len(split)}, "
          f"overdue timers, steps and messages {stuck}")
    ok = not missing and dupes == "0" and not split and stuck == "0" and ack_total > 0
    print("  PASS" if ok else "  FAIL")
    return ok


def case_db_restart(args):
    """Load through the front while the harness stops PostgreSQL hard and starts it again (it
    writes the times to the files named in args)."""
    front, dsn, token, seconds = int(args[0]), args[1], args[2], float(args[6])
    down_file, start_file, up_file = args[3], args[4], args[5]
    auth = {"Authorization": f"Bearer {token}"}
    status, _, body, _ = request(front, "POST", "/api/v1/incidents", auth,
                                 {"title": "faults: database restart", "severity": "Sev4"})
    assert status == 201, (status, body)
    key = json.loads(body)["key"]
    samples, acked, lock = [], [], threading.Lock()
    stop = time.monotonic() + seconds

    def reader():
        while time.monotonic() < stop:
            t = time.time()
            status, headers, _, took = request(front, "GET", "/api/v1/incidents?limit=5", auth, timeout=10)
            ready, _, _, rtook = request(front, "GET", "/readyz", timeout=10)
            with lock:
                samples.append((t, status, headers.get("retry-after"), took, ready, rtook))
            time.sleep(0.05)

    def writer(w):
        n = 0
        while time.monotonic() < stop:
            text = f"faults note w{w}-{n}"
            n += 1
            status, _, _, _ = request(front, "POST", f"/api/v1/incidents/{key}/timeline", auth,
                                      {"body": text}, timeout=10)
            if status == 201:
                with lock:
                    acked.append(text)
            time.sleep(0.02)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    threads += [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    down = float(open(down_file).read())
    start = float(open(start_file).read())
    up = float(open(up_file).read())
    # While down (after the first second, until it is being started): every answer a quick 503
    # with Retry-After.
    during = [s for s in samples if down + 1.0 <= s[0] and s[0] + max(s[3], s[5]) <= start]
    bad = [s for s in during if s[1] != 503 or not s[2] or s[3] > 1.0]
    not_ready = [s for s in during if s[4] != 503 or s[5] > 1.5]
    back = [s for s in samples if s[0] >= up and s[1] == 200]
    back_after = (back[0][0] - up) if back else float("inf")
    slowest = max((s[3] for s in during), default=0.0)
    print(f"  PostgreSQL down {start - down:.1f} s (start took {up - start:.1f} s); {len(during)} reads while down: "
          f"{len(during) - len(bad)} were 503 + Retry-After within 1 s (slowest {slowest:.2f} s); "
          f"/readyz said 503 {len(during) - len(not_ready)} of {len(during)} times")
    print(f"  reads answered 200 again {back_after:.1f} s after PostgreSQL was back")
    stored = set(psql(dsn, f"select body from timeline_events t join incidents i on i.id = t.incident_id "
                           f"where i.number = {key.split('-')[1]} and t.body like 'faults note %'"))
    missing = [a for a in acked if a not in stored]
    print(f"  notes acknowledged {len(acked)}, stored {len(stored)}, acknowledged but missing {len(missing)}")
    ok = during and not bad and not not_ready and back_after <= 5.0 and not missing
    if not ok:
        for s in during[:10]:
            print(f"    read at +{s[0] - down:.2f} s: {s[1]} Retry-After {s[2]} in {s[3]:.2f} s; /readyz {s[4]} in {s[5]:.2f} s")
    print("  PASS" if ok else "  FAIL")
    return bool(ok)


def case_editors(args):
    """`clients` people edit one incident at once through the front, each read-modify-write with
    If-Match, retrying on 412: no update lost, every refusal a 412 or 409."""
    front, dsn, token, clients, edits = int(args[0]), args[1], args[2], int(args[3]), int(args[4])
    auth = {"Authorization": f"Bearer {token}"}
    status, _, body, _ = request(front, "POST", "/api/v1/incidents", auth,
                                 {"title": "faults: many editors", "severity": "Sev3"})
    assert status == 201, (status, body)
    key = json.loads(body)["key"]
    done, refusals, lock = [], {}, threading.Lock()

    def editor(c):
        for n in range(edits):
            for _attempt in range(200):
                status, headers, body, _ = request(front, "GET", f"/api/v1/incidents/{key}", auth)
                if status != 200:
                    with lock:
                        refusals[status] = refusals.get(status, 0) + 1
                    continue
                text = f"edit by client {c}, number {n}"
                status, _, _, _ = request(front, "PATCH", f"/api/v1/incidents/{key}",
                                          {**auth, "If-Match": headers.get("etag", "")},
                                          {"summary": text})
                if status == 200:
                    with lock:
                        done.append(text)
                    break
                with lock:
                    refusals[status] = refusals.get(status, 0) + 1

    threads = [threading.Thread(target=editor, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    number = key.split("-")[1]
    version = int(psql(dsn, f"select version from incidents where number = {number}")[0])
    audited = set(psql(dsn, f"select after ->> 'summary' from audit_log "
                            f"where action = 'incident.edit' and target = '{key}'"))
    lost = [d for d in done if d not in audited]
    other = {s: n for s, n in refusals.items() if s not in (409, 412)}
    print(f"  {clients} editors × {edits} edits: {len(done)} applied, refusals {dict(sorted(refusals.items()))}")
    print(f"  version {version} (1 + {len(done)} edits), applied edits missing from the audit log "
          f"{len(lost)}, refusals other than 409/412 {sum(other.values())}")
    ok = len(done) == clients * edits and version == 1 + len(done) and not lost and not other
    print("  PASS" if ok else "  FAIL")
    return ok


def browse(port, method, path, cookies, form=None, headers=None):
    """One browser request to one replica: (status, headers, set cookies, body). `cookies`
    is the jar (name -> value) sent along; a form is sent urlencoded."""
    import urllib.parse
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    h = dict(headers or {})
    if cookies:
        h["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        h["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=body, headers=h)
    res = conn.getresponse()
    payload = res.read().decode("utf-8", "replace")
    conn.close()
    jar = {}
    for k, v in res.getheaders():
        if k.lower() == "set-cookie":
            name, _, rest = v.partition("=")
            jar[name] = rest.split(";")[0]
    return res.status, {k.lower(): v for k, v in res.getheaders()}, jar, payload


def csrf_of(page):
    import re
    m = re.search(r'name="csrf" value="([^"]+)"', page)
    return m.group(1) if m else ""


def case_replicas(args):
    """A person's browser and API client, each request sent to another replica in turn: the
    sign-in form opened on one and sent to the next, the session used on a third, a form's CSRF
    token checked by a replica that did not issue it, an Idempotency-Key replayed by another
    replica, and a sign-out on one ending the session on all."""
    ports = [int(p) for p in args[0].split(",")]
    dsn, token, email, password = args[1], args[2], args[3], args[4]
    turn = [0]

    def port():
        turn[0] += 1
        return ports[turn[0] % len(ports)]

    checks = []

    def check(what, ok, seen):
        checks.append(ok)
        print(f"  {'ok  ' if ok else 'FAIL'} {what} ({seen})")

    jar = {}
    status, _, got, page = browse(port(), "GET", "/login", jar)
    jar.update(got)
    status, headers, got, _ = browse(port(), "POST", "/login", jar,
                                     {"csrf": csrf_of(page), "email": email,
                                      "password": password, "next": "/account"})
    jar.update(got)
    check("sign-in form from one replica accepted by the next", status == 303 and "quell" in jar,
          f"{status} → {headers.get('location')}")
    status, _, _, page = browse(port(), "GET", "/account", jar)
    check("the session holds on a third replica", status == 200 and email in page, status)
    csrf = csrf_of(page)
    title = f"faults: replicas {time.time():.0f}"
    status, headers, _, _ = browse(port(), "POST", "/incidents", jar,
                                   {"csrf": csrf, "title": title, "severity": "Sev3",
                                    "service": "", "summary": "", "impact": "",
                                    "started_at": "", "detected_at": ""})
    made = psql(dsn, f"select count(*) from incidents where title = '{title}'")[0]
    check("a form with the CSRF token another replica issued is taken", status == 303 and made == "1",
          f"{status} → {headers.get('location')}, stored {made}")
    status, _, _, _ = browse(port(), "POST", "/incidents", jar,
                             {"csrf": "forged", "title": title + " forged", "severity": "Sev3"})
    forged = psql(dsn, f"select count(*) from incidents where title = '{title} forged'")[0]
    check("a forged CSRF token is refused by every replica", status == 403 and forged == "0",
          f"{status}, stored {forged}")
    auth = {"Authorization": f"Bearer {token}", "Idempotency-Key": f"faults-{time.time_ns()}"}
    body = {"title": title + " (API)", "severity": "Sev3"}
    answers = [request(port(), "POST", "/api/v1/incidents", auth, body) for _ in ports]
    keys = {json.loads(a[2]).get("key") for a in answers if a[0] == 201}
    replayed = [a[1].get("idempotent-replayed") for a in answers]
    stored = psql(dsn, f"select count(*) from incidents where title = '{title} (API)'")[0]
    check("one Idempotency-Key sent to each replica creates once and is replayed by the others",
          [a[0] for a in answers] == [201] * len(ports) and len(keys) == 1 and stored == "1"
          and replayed.count("true") == len(ports) - 1,
          f"answers {[a[0] for a in answers]}, keys {sorted(keys)}, replayed {replayed}, stored {stored}")
    status, _, _, _ = request(port(), "POST", "/api/v1/incidents", auth, {**body, "severity": "Sev2"})
    check("the same key with another body is refused by another replica", status == 422, status)
    status, _, _, page = browse(port(), "GET", "/account", jar)
    status, _, _, _ = browse(port(), "POST", "/logout", jar, {"csrf": csrf_of(page)})
    after = [browse(p, "GET", "/account", jar)[0] for p in ports]
    check("signing out on one replica ends the session on every one",
          status == 303 and all(a in (303, 401) for a in after), f"{status}, then {after}")
    ok = all(checks)
    print("  PASS" if ok else "  FAIL")
    return ok


def proxy(args):
    """A TCP proxy from `listen` to `target` that holds every chunk back by the milliseconds
    written in `delay_file` (read every 100 ms): a slow network to the database. `target` is a
    port, or a file holding one, read at each new connection: the front a failover re-points."""
    import asyncio
    listen, target, delay_file = int(args[0]), args[1], args[2]

    def target_port():
        return int(target) if target.isdigit() else int(open(target).read().strip())
    delay = [0.0]

    async def watch():
        while True:
            try:
                delay[0] = float(open(delay_file).read().strip() or 0) / 1000
            except (OSError, ValueError):
                delay[0] = 0.0
            await asyncio.sleep(0.1)

    async def pipe(r, w):
        try:
            while data := await r.read(65536):
                if delay[0]:
                    await asyncio.sleep(delay[0])
                w.write(data)
                await w.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            w.close()

    async def serve(r, w):
        try:
            tr, tw = await asyncio.open_connection("127.0.0.1", target_port())
        except OSError:
            w.close()
            return
        await asyncio.gather(pipe(r, tw), pipe(tr, w))

    async def main():
        asyncio.get_running_loop().create_task(watch())
        server = await asyncio.start_server(serve, "127.0.0.1", listen)
        async with server:
            await server.serve_forever()

    asyncio.run(main())
    return True


def case_slow_db(args):
    """Reads through the front while the harness slows the database link (`delay_file`) for the
    middle third: answers stay within the request timeout, are 200 or 503 (never a 500),
    /healthz keeps answering at once, and service recovers when the link is fast again."""
    front, token, delay_file, seconds, bound = int(args[0]), args[1], args[2], float(args[3]), float(args[4])
    auth = {"Authorization": f"Bearer {token}"}
    samples, health, lock = [], [], threading.Lock()
    began = time.monotonic()
    stop = began + seconds

    def phase(t):
        return 0 if t < seconds / 3 else (1 if t < 2 * seconds / 3 else 2)

    def reader():
        while time.monotonic() < stop:
            t = time.monotonic() - began
            status, _, _, took = request(front, "GET", "/api/v1/incidents?limit=20", auth, timeout=bound + 5)
            with lock:
                samples.append((t, phase(t), status, took))

    def prober():
        while time.monotonic() < stop:
            status, _, _, took = request(front, "GET", "/healthz", timeout=5)
            with lock:
                health.append((status, took))
            time.sleep(0.1)

    def slower():
        time.sleep(seconds / 3)
        open(delay_file, "w").write("400")
        time.sleep(seconds / 3)
        open(delay_file, "w").write("0")

    threads = [threading.Thread(target=reader) for _ in range(8)]
    threads += [threading.Thread(target=prober), threading.Thread(target=slower)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p, name in [(0, "fast"), (1, "slow (400 ms each way)"), (2, "fast again")]:
        xs = [s for s in samples if s[1] == p]
        codes = {}
        for s in xs:
            codes[s[2]] = codes.get(s[2], 0) + 1
        worst = max((s[3] for s in xs), default=0)
        print(f"  {name}: {len(xs)} reads, answers {dict(sorted(codes.items()))}, slowest {worst:.2f} s")
    too_slow = [s for s in samples if s[3] > bound + 1]
    errors = [s for s in samples if s[2] not in (200, 503)]
    recovered = [s for s in samples if s[0] > seconds - 2]
    health_worst = max((h[1] for h in health), default=0)
    health_bad = [h for h in health if h[0] != 200]
    print(f"  /healthz: {len(health)} probes, slowest {health_worst:.3f} s, not 200 {len(health_bad)}")
    print(f"  answers slower than the {bound:.0f} s request timeout + 1 s: {len(too_slow)}; "
          f"answers other than 200/503: {len(errors)}; last 2 s all 200: "
          f"{all(s[2] == 200 for s in recovered) and bool(recovered)}")
    ok = (not too_slow and not errors and not health_bad and health_worst < 0.5
          and recovered and all(s[2] == 200 for s in recovered))
    print("  PASS" if ok else "  FAIL")
    return bool(ok)


def case_failover(args):
    """Writers through the front while the harness kills the primary and promotes its
    synchronous standby (writing the times to files): every acknowledged write is on the new
    primary, and writing resumes within 10 s."""
    front, token, new_dsn, killed_file, promoted_file, seconds = (
        int(args[0]), args[1], args[2], args[3], args[4], float(args[5]))
    auth = {"Authorization": f"Bearer {token}"}
    status, _, body, _ = request(front, "POST", "/api/v1/incidents", auth,
                                 {"title": "faults: failover", "severity": "Sev4"})
    assert status == 201, (status, body)
    key = json.loads(body)["key"]
    acked, lock = [], threading.Lock()
    stop = time.monotonic() + seconds

    def writer(w):
        n = 0
        while time.monotonic() < stop:
            text = f"failover note w{w}-{n}"
            n += 1
            began = time.time()
            status, _, _, _ = request(front, "POST", f"/api/v1/incidents/{key}/timeline", auth,
                                      {"body": text}, timeout=10)
            if status == 201:
                with lock:
                    acked.append((began, time.time(), text))
            time.sleep(0.02)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    killed = float(open(killed_file).read())
    promoted = float(open(promoted_file).read())
    before = [text for _, done, text in acked if done < killed]
    # Writes sent after the kill: when the first of them was acknowledged.
    after = [done for began, done, _ in acked if began > killed]
    resumed = (min(after) - killed) if after else float("inf")
    stored = set(psql(new_dsn, "select body from timeline_events where body like 'failover note %'"))
    missing = [text for _, _, text in acked if text not in stored]
    print(f"  {len(acked)} notes acknowledged ({len(before)} before the primary was killed); "
          f"on the promoted standby: {len(stored)}; acknowledged but missing {len(missing)}")
    print(f"  standby promoted {promoted - killed:.1f} s after the kill; writes acknowledged again "
          f"{resumed:.1f} s after the kill")
    ok = acked and before and not missing and resumed <= 10.0
    print("  PASS" if ok else "  FAIL")
    return bool(ok)


def receiver(args):
    """A webhook endpoint that answers 200 after `delay` seconds and writes each message's
    webhook-id, a line per receipt, to `out` (a repeat is a message sent twice)."""
    import http.server
    port, out, delay = int(args[0]), open(args[1], "a", buffering=1), float(args[2])
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint would

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            with lock:
                out.write(self.headers.get("webhook-id", "-") + "\n")
            time.sleep(delay)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    class Server(http.server.ThreadingHTTPServer):
        request_queue_size = 1024  # the default backlog of 5 drops connects

    Server(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    case = {"storm": case_storm, "db-restart": case_db_restart, "editors": case_editors,
            "slow-db": case_slow_db, "proxy": proxy, "failover": case_failover,
            "receiver": receiver, "replicas": case_replicas}[sys.argv[1]]
    sys.exit(0 if case(sys.argv[2:]) else 1)
