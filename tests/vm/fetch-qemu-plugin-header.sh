#!/usr/bin/env bash
# tests/vm/fetch-qemu-plugin-header.sh — QEMU's plugin API header
# (include/qemu/qemu-plugin.h) of the installed QEMU, for the TCG plugin
# tests/vm/tcg-insn-profile.c: Debian ships the plugin loader in
# qemu-system-x86 but not the header.
#
#   tests/vm/fetch-qemu-plugin-header.sh     prints the header's directory
#
# The installed qemu-system-x86's source version (dpkg-query) names the
# Debian source package; apt-get fetches it (`source --download-only`)
# through a private configuration (kernel/private-apt.sh: its own sources
# list, lists and cache, nothing installed) with a deb-src line for
# bookworm-backports, where this QEMU comes from (tools/setup.sh).  apt
# checks the signed Release file with debian-archive-keyring and each
# downloaded file against the hashes of the signed Sources index; the
# script checks them once more against the .dsc's Checksums-Sha256.  Only
# qemu-plugin.h is extracted from the upstream tarball (after checking that
# no Debian patch in debian/patches/series touches it), into
#   ${LUOD_CACHE:-$HOME/.cache/luod-testbed}/qemu-plugin/VERSION/
# (VERSION with ':' as '_'); the downloaded source is removed after.
# Nothing goes into the git tree.  Once the header is there the script only
# prints its directory.  Everything but that path goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
log() { printf 'fetch-qemu-plugin-header: %s\n' "$*" >&2; }

SUITE=bookworm-backports
MIRROR=http://deb.debian.org/debian
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}

version=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
	{ log "qemu-system-x86 is not installed (tools/setup.sh)"; exit 2; }
srcpkg=$(dpkg-query -W -f='${source:Package}' qemu-system-x86)
[[ $version =~ ^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$ ]] || { log "odd version '$version' of qemu-system-x86"; exit 2; }
dir=$cache/qemu-plugin/${version//:/_}
if [[ -f $dir/qemu-plugin.h ]]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache/qemu-plugin"
# One fetch at a time (the build script may be run by two callers).
exec {lock}>"$cache/qemu-plugin/.fetch.lock"
flock "$lock"
if [[ -f $dir/qemu-plugin.h ]]; then
	echo "$dir"
	exit 0
fi

apt_root=$cache/apt-qemu-src
# shellcheck source=kernel/private-apt.sh
. "$top/kernel/private-apt.sh"
private_apt_setup "$SUITE" "$MIRROR"
# Sources only: the private list is a deb-src line (private_apt_setup
# writes a deb line).
cat >"$apt_root/etc/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main
SRC
log "apt-get update ($SUITE sources, private configuration under $apt_root)"
private_apt_update
# (read whole: grep -q stopping early would fail the pipe under pipefail)
versions=$(apt-cache "${aptc[@]}" showsrc "$srcpkg" 2>/dev/null | sed -n 's/^Version: //p')
if ! grep -qxF "$version" <<<"$versions"; then
	log "$srcpkg $version is not (or no longer) in $SUITE's sources; there are: ${versions//$'\n'/ }"
	exit 1
fi

work=$(mktemp -d "$cache/qemu-plugin/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
upstream=${version#*:}
# The signed Sources index's SHA-256 of every file of the source package
# (apt-cache reads the index apt verified against the signed InRelease).
# Records are paragraphs; the one of this version is taken.
apt-cache "${aptc[@]}" showsrc "$srcpkg" 2>/dev/null |
	awk -v v="$version" '
		/^$/ { mine = 0 } /^Version: / { mine = ($2 == v) }
		/^Checksums-Sha256:/ { on = 1; next } on && /^ / { if (mine) print $1, $2, $3; next } { on = 0 }' |
	sort -u >"$work/index.sha256"
[[ -s $work/index.sha256 ]] || { log "no Checksums-Sha256 for $srcpkg $version in the Sources index"; exit 1; }
# check_sums LIST: each "SHA256 SIZE NAME" of LIST that was downloaded
# matches; prints how many did.
check_sums() {
	local sum size name n=0
	while read -r sum size name; do
		[[ -f $work/$name ]] || continue
		[[ $(stat -c %s "$work/$name") == "$size" ]] || { log "$name: size differs from $1's $size"; exit 1; }
		[[ $(sha256sum "$work/$name" | cut -d' ' -f1) == "$sum" ]] || { log "$name: sha256 differs from $1's"; exit 1; }
		n=$((n + 1))
	done <"$1"
	echo "$n"
}
log "apt-get source --download-only $srcpkg=$version (the upstream tarball is ~40 MB)"
if (cd "$work" && apt-get "${aptc[@]}" source --download-only -qq "$srcpkg=$version") >"$work/apt.log" 2>&1; then
	dsc=$work/${srcpkg}_${upstream}.dsc
	# The .dsc's own list, too (apt checked each file against the index).
	sed -n '/^Checksums-Sha256:/,/^[^ ]/{/^ /p}' "$dsc" | sed 's/^ //' >"$work/dsc.sha256"
	n=$(check_sums "$work/dsc.sha256")
	((n > 0)) || { log "no Checksums-Sha256 in $dsc"; exit 1; }
	log "$n files match the sha256 in ${dsc##*/}"
else
	# Some mirrors (this machine's) serve the upstream tarball but not the
	# .dsc and the Debian tarball: the upstream tarball alone, checked
	# against the signed index.
	sed 's/^/    apt: /' "$work/apt.log" >&2
	log "the full source package is not downloadable here: the upstream tarball alone (--tar-only)"
	(cd "$work" && apt-get "${aptc[@]}" source --download-only --tar-only -qq "$srcpkg=$version") >&2
fi
n=$(check_sums "$work/index.sha256")
log "$n files match the sha256 in the signed Sources index"

shopt -s nullglob
origs=("$work/${srcpkg}"_*.orig.tar.*)
debs=("$work/${srcpkg}"_*.debian.tar.*)
shopt -u nullglob
orig=${origs[0]:-} deb=${debs[0]:-}
[[ -n $orig ]] || { log "no .orig tarball in $work"; exit 1; }
# A Debian patch that changed the header would make the upstream file the
# wrong one: refuse rather than guess.  Without the Debian tarball this
# cannot be checked; QEMU checks the plugin's API version at load anyway.
if [[ -n $deb ]]; then
	tar -C "$work" -xf "$deb" debian/patches 2>/dev/null || true
	if [[ -f $work/debian/patches/series ]]; then
		while read -r p rest; do
			[[ -z $p || $p == '#'* ]] && continue
			if grep -qE '^\+\+\+ [^ ]*include/qemu/qemu-plugin\.h' "$work/debian/patches/$p" 2>/dev/null; then
				log "Debian patch $p changes include/qemu/qemu-plugin.h: extract with dpkg-source -x instead"
				exit 1
			fi
		done <"$work/debian/patches/series"
	fi
	log "no Debian patch touches include/qemu/qemu-plugin.h"
else
	log "note: Debian's patches not checked for changes to the header (no Debian tarball)"
fi
log "extracting include/qemu/qemu-plugin.h from ${orig##*/}"
nice tar -C "$work" -xf "$orig" --wildcards --no-anchored 'include/qemu/qemu-plugin.h'
hdr=$(find "$work" -path '*/include/qemu/qemu-plugin.h' | head -1)
[[ -n $hdr ]] || { log "no include/qemu/qemu-plugin.h in ${orig##*/}"; exit 1; }
grep -q 'QEMU_PLUGIN_VERSION' "$hdr" || { log "$hdr does not look like QEMU's plugin header"; exit 1; }
mkdir -p "$dir.tmp"
cp "$hdr" "$dir.tmp/qemu-plugin.h"
printf '%s %s\n' "$srcpkg" "$version" >"$dir.tmp/SOURCE"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
log "header of $srcpkg $version in $dir"
echo "$dir"
