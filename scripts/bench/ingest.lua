-- wrk script for scripts/bench-ingest: POSTs Alertmanager v4 notifications, every alert with a
-- fingerprint never sent before. Arguments (after --): mode (unique | storm | open), alerts per
-- post, key, run prefix. unique spreads posts over 100 groups; storm sends every alert in one
-- group; open gives every post a group never seen before, so each post opens an incident.
-- Each alert is shaped as Prometheus rules usually make them: 7 labels, 2 annotations.
local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
  table.insert(threads, thread)
end

function init(args)
  mode = args[1] or "unique"
  per_post = tonumber(args[2] or "1")
  prefix = args[4] or "run"
  counter = 0
  accepted = 0
  refused = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. (args[3] or "")
end

local function alert(fp, group)
  return string.format(
    '{"status":"firing","labels":{"alertname":"%s","instance":"%s:9100","job":"node","severity":"warning",'
    .. '"service":"payments-gateway","namespace":"payments","cluster":"eu-west-1"},'
    .. '"annotations":{"summary":"%s on %s","runbook_url":"https://runbooks.example.com/%s"},'
    .. '"startsAt":"2026-11-30T06:00:00Z","endsAt":"0001-01-01T00:00:00Z",'
    .. '"generatorURL":"http://prometheus:9090/graph?g0.expr=up","fingerprint":"%s"}',
    group, fp, group, fp, group, fp)
end

function request()
  counter = counter + 1
  local group = "RetryHerd"
  if mode == "unique" then group = "Alert" .. (counter % 100) end
  if mode == "open" then group = string.format("Open-%s-%d-%d", prefix, tid, counter) end
  local items = {}
  for i = 1, per_post do
    items[i] = alert(string.format("%s-%d-%d-%d", prefix, tid, counter, i), group)
  end
  local body = string.format(
    '{"version":"4","groupKey":"{}:{alertname=\\"%s\\"}","truncatedAlerts":0,"status":"firing",'
    .. '"receiver":"quell","groupLabels":{"alertname":"%s"},"commonLabels":{"alertname":"%s"},'
    .. '"commonAnnotations":{},"externalURL":"http://alertmanager:9093","alerts":[%s]}',
    group, group, group, table.concat(items, ","))
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status == 202 then accepted = accepted + 1 else refused = refused + 1 end
end

function done(summary, latency, requests)
  local acc, ref = 0, 0
  for _, t in ipairs(threads) do
    acc = acc + t:get("accepted")
    ref = ref + t:get("refused")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT accepted=%d refused=%d socket_errors=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
    acc, ref, e.connect + e.read + e.write + e.timeout, summary.duration / 1e6,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
