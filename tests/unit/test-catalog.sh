#!/usr/bin/env bash
# The journal catalog (units/luod.catalog) compiles with the real journalctl
# and has an entry, with a Subject, for each message ID luod sends
# (LUOD_MESSAGE_* in the build's config.h).
#   test-catalog.sh SOURCE_ROOT BUILD_ROOT
set -euo pipefail
src=$1 build=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd/catalog" "$root/var/lib/systemd/catalog"
cp "$src/units/luod.catalog" "$root/usr/lib/systemd/catalog/"
journalctl --root="$root" --update-catalog
journalctl --root="$root" --list-catalog >"$root/list"
ids=$(sed -n 's/^#define LUOD_MESSAGE_[A-Z_]*_STR "\([0-9a-f]\{32\}\)"$/\1/p' "$build/config.h")
n=0
for id in $ids; do
	grep -q "^$id luod: ." "$root/list" || { echo "not ok: message ID $id has no catalog entry"; cat "$root/list"; exit 1; }
	n=$((n + 1))
done
[[ $n -ge 2 ]] || { echo "not ok: found $n LUOD_MESSAGE_* IDs in config.h"; exit 1; }
[[ $(wc -l <"$root/list") -eq $n ]] || { echo "not ok: the catalog has entries luod never sends"; cat "$root/list"; exit 1; }
echo "ok: $n catalog entries, one per message ID"
