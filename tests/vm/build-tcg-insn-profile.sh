#!/usr/bin/env bash
# tests/vm/build-tcg-insn-profile.sh — builds the QEMU TCG plugin
# tests/vm/tcg-insn-profile.c against the installed QEMU's plugin header
# (tests/vm/fetch-qemu-plugin-header.sh) and prints the .so's path:
#
#   ${LUOD_CACHE:-$HOME/.cache/luod-testbed}/qemu-plugin/VERSION/tcg-insn-profile-SHA.so
#
# SHA: the first 16 hex digits of the sha256 of the source, the header and
# the compiler command, so an edited source builds anew and a built one is
# reused.  glib's headers (qemu-plugin.h includes <glib.h>) come from
# libglib2.0-dev (tools/setup.sh).  Everything but the path goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log() { printf 'build-tcg-insn-profile: %s\n' "$*" >&2; }

src=$here/tcg-insn-profile.c
hdir=$("$here/fetch-qemu-plugin-header.sh")
glib=$(pkg-config --cflags glib-2.0 2>/dev/null) ||
	{ log "no glib-2.0 for pkg-config (install libglib2.0-dev: tools/setup.sh)"; exit 2; }
# shellcheck disable=SC2206 # pkg-config's flags, split on purpose
cc=(gcc -O2 -shared -fPIC -Wall -Wextra -Werror -pthread -I"$hdir" $glib)
sha=$( { cat "$src" "$hdir/qemu-plugin.h"; printf '%s\n' "${cc[@]}"; } | sha256sum | cut -c1-16)
so=$hdir/tcg-insn-profile-$sha.so
if [[ ! -f $so ]]; then
	log "gcc ${src##*/} -> $so"
	"${cc[@]}" -o "$so.tmp.$$" "$src" || { rm -f "$so.tmp.$$"; log "gcc failed"; exit 1; }
	mv "$so.tmp.$$" "$so"
fi
echo "$so"
