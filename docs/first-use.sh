#!/usr/bin/env bash
# netsvc's first use on its embedded default, through all three areas: the
# commands of README.md "First use", as a script. CI runs it
# (test/e2e/first-use.test.ts) on ports of its own; run it from the project
# directory after `npm install`. The variables below default to the embedded
# configuration's ports.
set -euo pipefail
API=${API:-http://127.0.0.1:8080/svc/api}
FLOW_PORT=${FLOW_PORT:-2055}
SYSLOG_PORT=${SYSLOG_PORT:-5514}
LOG=${LOG:-netsvc.log}
json() { node -pe "JSON.parse(require('fs').readFileSync(0)).$1"; }

# Start the service: it runs in the background until this shell exits (`kill $SERVE`
# stops it sooner) and keeps its data under ./data.
node dist/src/cli.js serve > "$LOG" 2>&1 &
SERVE=$!
trap 'kill $SERVE' EXIT
# Wait until it answers. If it exits instead (a port in use, another serve on ./data), its
# log's last lines say why and `kill -0` fails: the script stops there; pasted, stop too.
until curl -sf "${API%/svc/api}/health" > /dev/null; do
  kill -0 $SERVE 2> /dev/null || { tail -n 3 "$LOG"; break; }
  sleep 0.2
done
kill -0 $SERVE

# The entity, a user with all three areas, and credentials (the secret is shown once).
bin/netsvc admin entity add default --areas netflow,logviewer,hotspot
bin/netsvc admin user add default alice --areas netflow,logviewer,hotspot
CRED=$(bin/netsvc admin credentials issue default alice --json)
API_ID=$(echo "$CRED" | json api_id)
SECRET=$(echo "$CRED" | json secret)

# One token per area: each area has its own POST /<area>/auth.
token() {
  curl -sf -X POST "$API/$1/auth" -H 'content-type: application/json' \
    -d "{\"api_id\":\"$API_ID\",\"secret\":\"$SECRET\"}" | json result.access_token
}
NETFLOW=$(token netflow)
LOGVIEWER=$(token logviewer)
HOTSPOT=$(token hotspot)

# netflow: send the bundled softflowd capture, then the last hour's KPIs (times in
# the configured zone; `YYYY/MM/DD HH:mm` or ISO 8601). Received flows reach the
# open hour's file every 5 s: ask until they are counted.
bin/netsvc replay fixtures/flow-oracle/1/softflowd-v9/export.pcap --to "127.0.0.1:$FLOW_PORT"
kpi() {
  curl -sf -G -H "Authorization: Bearer $NETFLOW" "$API/netflow/kpi" \
    --data-urlencode "start=$(date -d '1 hour ago' +'%Y/%m/%d %H:%M')" \
    --data-urlencode "end=$(date +'%Y/%m/%d %H:%M')"
}
for i in $(seq 60); do [ "$(kpi | json result.kpi.active_flows)" -gt 0 ] && break; sleep 1; done
kpi
echo

# logviewer: a syslog message to the embedded receiver, then find it (written within a second or so).
logger --udp --server 127.0.0.1 --port "$SYSLOG_PORT" -t first-use "hello from the first-use walk-through"
logs() { curl -sf -G -H "Authorization: Bearer $LOGVIEWER" "$API/logviewer/latest" --data-urlencode "tag=first-use"; }
for i in $(seq 30); do [ "$(logs | json result.length)" -gt 0 ] && break; sleep 1; done
logs
echo

# hotspot: a FreeRADIUS user written into the embedded RADIUS database, then the user list.
curl -sf -X POST -H "Authorization: Bearer $HOTSPOT" -H 'content-type: application/json' "$API/hotspot/users" \
  -d '{"username":"guest1","usertype":"user","password":"Guest-pass-1"}'
echo
curl -sf -H "Authorization: Bearer $HOTSPOT" "$API/hotspot/users"
echo
