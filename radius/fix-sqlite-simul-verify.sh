#!/bin/sh
# Fixes Simultaneous-Use on FreeRADIUS 3.2.1's sqlite backend (docs/hotspot.md).
#
# The stock mods-config/sql/main/sqlite/queries.conf has, in simul_verify_query,
#   WHERE username = '%{${group_attribute}}'     (= %{SQL-Group}: empty while authenticating)
# so the verify step finds no open session and a second login is accepted.
# The mysql and postgresql queries use %{SQL-User-Name}; this makes sqlite do
# the same. Idempotent; keeps a .orig copy the first time.
#
# Usage: fix-sqlite-simul-verify.sh [/etc/freeradius/3.0/mods-config/sql/main/sqlite/queries.conf]
set -eu
f="${1:-/etc/freeradius/3.0/mods-config/sql/main/sqlite/queries.conf}"
[ -f "$f" ] || { echo "no such file: $f" >&2; exit 1; }
[ -f "$f.orig" ] || cp -p "$f" "$f.orig"
awk '
  /^simul_verify_query/ { inq = 1 }
  inq { gsub(/%\{\$\{group_attribute\}\}/, "%{SQL-User-Name}") }
  inq && !/\\$/ { inq = 0 }
  { print }
' "$f" > "$f.tmp"
cat "$f.tmp" > "$f"
rm -f "$f.tmp"
if sed -n '/^simul_verify_query/,/[^\\]$/p' "$f" | grep -q "username = '%{SQL-User-Name}'"; then
  echo "simul_verify_query in $f filters on %{SQL-User-Name}"
else
  echo "could not fix simul_verify_query in $f" >&2
  exit 1
fi
