#!/usr/bin/env bash
# kernel/fetch-source.sh — fetch Debian's linux-source-7.3 through a private apt
# configuration (own sources list, lists, cache and an empty dpkg status), so
# nothing from trixie is ever installed on the bookworm host; check its sha256
# against kernel/SOURCE; unpack it once into the cache.
#
# Prints the path of the unpacked source tree on stdout.
# Env: LUOD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed)
set -euo pipefail
# Everything but the tree path goes to stderr: callers capture stdout.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel/SOURCE
. "$here/SOURCE"
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
apt_root=$cache/apt
src_root=$cache/src
log() { printf 'fetch-source: %s\n' "$*" >&2; }

mkdir -p "$src_root"
tree=$src_root/linux-source-$UPSTREAM-$DEB_VERSION
if [[ -f $tree/.luod-unpacked ]]; then
	echo "$tree"
	exit 0
fi

# shellcheck source=kernel/private-apt.sh
. "$here/private-apt.sh"
private_apt_setup "$SUITE" "$MIRROR"

deb=$apt_root/debs/${PACKAGE}_${DEB_VERSION}_all.deb
if [[ ! -f $deb ]]; then
	log "apt-get update ($SUITE, private configuration under $apt_root)"
	private_apt_update
	want=$DEB_VERSION
	if ! apt-cache "${aptc[@]}" madison "$PACKAGE" | awk '{print $3}' | grep -qx "$want"; then
		newest=$(apt-cache "${aptc[@]}" madison 'linux-source-7.3' | awk '{print $3}' | sort -V | tail -1)
		log "################################################################"
		log "WARNING: $PACKAGE $DEB_VERSION has left $SUITE."
		log "WARNING: newest available is '${newest:-none}'; update kernel/SOURCE"
		log "WARNING: (DEB_VERSION and SHA256) after checking it, then rerun."
		log "################################################################"
		exit 1
	fi
	(cd "$apt_root/debs" && apt-get "${aptc[@]}" download "$PACKAGE=$DEB_VERSION") >&2
	got=$(ls "$apt_root/debs/${PACKAGE}_"*"_all.deb" | head -1)
	[[ $got == "$deb" ]] || mv "$got" "$deb"
fi
sum=$(sha256sum "$deb" | awk '{print $1}')
if [[ $sum != "$SHA256" ]]; then
	log "sha256 mismatch for $deb: got $sum, want $SHA256"
	exit 1
fi
log "unpacking $deb"
tmp=$(mktemp -d "$src_root/unpack.XXXXXX")
dpkg-deb -x "$deb" "$tmp"
tarball=$(ls "$tmp"/usr/src/linux-source-*.tar.* | head -1)
mkdir -p "$tmp/tree"
tar -C "$tmp/tree" -xf "$tarball" --strip-components=1
rm -rf "$tree"
mv "$tmp/tree" "$tree"
rm -rf "$tmp"
touch "$tree/.luod-unpacked"
echo "$tree"
