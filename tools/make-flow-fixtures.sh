#!/bin/bash
# make-flow-fixtures.sh SEED [N] [DEST]
#
# Regenerates fixtures/flow-oracle/<SEED>/ from real exporters: runs
# tools/flow-oracle/make_all.sh (synthetic traffic → softflowd and pmacct as
# NetFlow v5, v9 and IPFIX → captured export datagrams → nfcapd + nfdump
# reference answers), then keeps per exporter × version only what the tests
# read: the export pcap, its capture metadata, reference.json, flows.csv,
# commands.txt and nfcapd's log. Needs (Debian): softflowd pmacct nfdump
# tcpdump faketime wireshark-common python3-scapy; run as root (tcpdump -i lo).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SEED="$1"; N="${2:-3000}"
DEST="${3:-$HERE/../fixtures/flow-oracle}"
RUN="$(mktemp -d /tmp/flow-fixtures.XXXXXX)"
trap 'rm -rf "$RUN"' EXIT
PY="${PY:-/usr/bin/python3}" bash "$HERE/flow-oracle/make_all.sh" "$SEED" "$RUN" "$N"
OUT="$DEST/$SEED"
rm -rf "$OUT"
mkdir -p "$OUT"
for exp in softflowd pmacct; do
  for ver in 5 9 10; do
    d="$OUT/$exp-v$ver"
    mkdir -p "$d"
    cp "$RUN/export-$exp-v$ver.pcap" "$d/export.pcap"
    # Paths in the metadata are of the temporary run directory; keep only the names.
    sed "s#$RUN/##g; s#/tmp/flowexp\.[A-Za-z0-9]*/##g" "$RUN/export-$exp-v$ver.pcap.meta.json" > "$d/export.pcap.meta.json"
    cp "$RUN/ref-$exp-v$ver/reference.json" "$RUN/ref-$exp-v$ver/flows.csv" \
       "$RUN/ref-$exp-v$ver/commands.txt" "$RUN/ref-$exp-v$ver/nfcapd.log" "$d/"
  done
done
cp "$RUN/traffic.pcap.truth.json" "$RUN/consistency.txt" "$RUN/timings.txt" "$OUT/"
echo "N=$N" > "$OUT/params.txt"
du -sh "$OUT"
