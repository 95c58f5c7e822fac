#!/bin/bash
# capture-linktypes.sh OUTDIR
#
# Makes the link-type fixtures of test/collector/pcap/pcap.test.ts with real tools:
# sends known UDP datagrams over loopback (IPv4 and IPv6) while tcpdump
# captures them as Ethernet (-i lo), Linux cooked v2 (-i any), Linux cooked
# v1 (-i any -y LINUX_SLL), nanosecond pcap, and with a 120-byte snap length;
# editcap then rewrites captures as pcapng (µs and ns). The sender writes
# sent.json (family, ports, payload hex), which the test compares against.
# Needs tcpdump, editcap (wireshark-common), python3. Run as root.
set -euo pipefail
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
PORT="${PORT:-$((40000 + RANDOM % 10000))}"
WORK="$(mktemp -d /tmp/linktypes.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
F="udp and dst port $PORT"
tcpdump -i lo -n -Z root -U -w "$WORK/lo-ethernet.pcap" "$F" 2> "$WORK/t1.err" & PIDS+=($!)
tcpdump -i any -n -Z root -U -w "$WORK/any-sll2.pcap" "$F" 2> "$WORK/t2.err" & PIDS+=($!)
tcpdump -i any -y LINUX_SLL -n -Z root -U -w "$WORK/any-sll.pcap" "$F" 2> "$WORK/t3.err" & PIDS+=($!)
tcpdump -i lo --time-stamp-precision=nano -n -Z root -U -w "$WORK/lo-nano.pcap" "$F" 2> "$WORK/t4.err" & PIDS+=($!)
tcpdump -i lo -s 120 -n -Z root -U -w "$WORK/lo-snap120.pcap" "$F" 2> "$WORK/t5.err" & PIDS+=($!)
for _ in $(seq 100); do
  n=$( (grep -l "listening on" "$WORK"/t*.err 2>/dev/null || true) | wc -l)
  [ "$n" = 5 ] && break
  sleep 0.05
done
sleep 0.5
# Also send to 127.0.0.1:PORT+1 (filtered out: shows the capture filter, not the reader).
python3 - "$PORT" "$OUT/sent.json" <<'PY'
import json, socket, sys, time
port = int(sys.argv[1])
sent = []
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s4.bind(("127.0.0.1", 0)); s6.bind(("::1", 0))
for i in range(12):
    v6 = i % 3 == 2
    size = [1, 40, 200, 1400, 9000][i % 5]
    payload = bytes((i * 7 + k) & 0xff for k in range(size))
    s = s6 if v6 else s4
    s.sendto(payload, ("::1" if v6 else "127.0.0.1", port))
    sent.append({"family": 6 if v6 else 4, "srcPort": s.getsockname()[1], "dstPort": port,
                 "length": size, "payloadHex": payload.hex(), "wall": time.time()})
    time.sleep(0.01)
json.dump({"port": port, "datagrams": sent}, open(sys.argv[2], "w"), indent=1)
PY
sleep 0.5
for p in "${PIDS[@]}"; do kill -INT "$p"; wait "$p" || true; done
PIDS=()
cp "$WORK"/*.pcap "$OUT/"
editcap -F pcapng "$OUT/any-sll2.pcap" "$OUT/any-sll2.pcapng"
editcap -F pcapng "$OUT/lo-nano.pcap" "$OUT/lo-nano.pcapng"
ls -l "$OUT"
