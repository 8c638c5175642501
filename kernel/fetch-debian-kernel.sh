#!/usr/bin/env bash
# kernel/fetch-debian-kernel.sh — download Debian's linux-image-7.3.4+deb13-amd64
# and the packages it needs (kernel/DEBIAN-KERNEL: exact versions and
# sha256) from trixie-backports through the private apt configuration
# (kernel/private-apt.sh): nothing is installed on this host.  The test
# bed's image recipe (tests/vm/host/mkimage) installs them into the guest.
#
# Prints the directory holding the checked .deb files on stdout.
# Env: LUOD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed)
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel/DEBIAN-KERNEL
. "$here/DEBIAN-KERNEL"
cache=${LUOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luod-testbed}
apt_root=$cache/apt
dir=$cache/debian-kernel/$KERNEL_RELEASE
log() { printf 'fetch-debian-kernel: %s\n' "$*" >&2; }

mkdir -p "$dir"
# shellcheck source=kernel/private-apt.sh
. "$here/private-apt.sh"
private_apt_setup "$SUITE" "$MIRROR"
updated=0
while read -r name version sum; do
	[[ -n $name ]] || continue
	deb=$dir/${name}_${version//:/%3a}.deb
	if [[ ! -f $deb ]]; then
		if ((!updated)); then
			log "apt-get update ($SUITE, private configuration under $apt_root)"
			private_apt_update
			updated=1
		fi
		if ! apt-cache "${aptc[@]}" madison "$name" | awk '{print $3}' | grep -qxF "$version"; then
			log "$name $version is no longer in $SUITE (newest: $(apt-cache "${aptc[@]}" madison "$name" | awk '{print $3}' | sort -V | tail -1)); update kernel/DEBIAN-KERNEL"
			exit 1
		fi
		log "downloading $name $version"
		tmp=$(mktemp -d "$dir/dl.XXXXXX")
		(cd "$tmp" && apt-get "${aptc[@]}" download -qq "$name=$version") >&2
		mv "$tmp"/*.deb "$deb.part"
		rmdir "$tmp"
		mv "$deb.part" "$deb"
	fi
	got=$(sha256sum "$deb" | awk '{print $1}')
	[[ $got == "$sum" ]] || { log "sha256 mismatch for $deb: got $got, want $sum"; exit 1; }
done <<<"$PACKAGES"
echo "$dir"
