#!/usr/bin/env bash
# tools/setup.sh — install every Debian package luod's build, tests and VM
# test bed need, on a Debian 12 (bookworm) machine.  Idempotent: when all is
# present it only checks (a few seconds, no apt-get update).
#
# QEMU 10 (igb SR-IOV NIC) comes from bookworm-backports, which this script
# enables.  No trixie package is ever installed here: the 7.3 kernel source
# is fetched separately by kernel/fetch-source.sh through a private apt
# configuration.
set -euo pipefail

PKGS=(
	build-essential gcc meson ninja-build pkg-config git
	libsystemd-dev libudev-dev libnl-3-dev libnl-route-3-dev libjson-c-dev libmd-dev
	dbus dbus-bin libglib2.0-bin systemd
	kexec-tools iproute2 busybox-static cpio gzip ccache
	bc bison flex libelf-dev libssl-dev dwarves python3 rsync xz-utils
	kmod libkmod-dev file libarchive-dev e2fsprogs udev
	clang libclang-rt-14-dev
	mmdebstrap debhelper dpkg-dev fakeroot lintian
	linux-perf acpica-tools
	# glib's headers: QEMU's qemu-plugin.h includes <glib.h> (tests/vm/tcg-insn-profile.c)
	libglib2.0-dev
)
BACKPORTS_PKGS=(qemu-system-x86)
QEMU_MIN_MAJOR=10

log() { printf 'setup: %s\n' "$*" >&2; }

need_root() {
	if [[ $(id -u) -ne 0 ]]; then
		log "must run as root to install packages (missing: $*)"
		exit 1
	fi
}

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done

qemu_ok() {
	command -v qemu-system-x86_64 >/dev/null || return 1
	local v
	v=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
	[[ -n $v && $v -ge $QEMU_MIN_MAJOR ]]
}

bp_list=/etc/apt/sources.list.d/luod-bookworm-backports.sources
if [[ ${#missing[@]} -eq 0 ]] && qemu_ok; then
	log "all packages present; QEMU $(qemu-system-x86_64 --version | head -1 | awk '{print $4}')"
	exit 0
fi

need_root "${missing[@]}" qemu-system-x86
export DEBIAN_FRONTEND=noninteractive

if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	log "enabling bookworm-backports in $bp_list"
	cat >"$bp_list" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

log "apt-get update"
apt-get update -qq
if [[ ${#missing[@]} -gt 0 ]]; then
	log "installing: ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! qemu_ok; then
	log "installing QEMU from bookworm-backports"
	apt-get install -y -qq --no-install-recommends -t bookworm-backports "${BACKPORTS_PKGS[@]}"
fi
qemu_ok || { log "QEMU >= $QEMU_MIN_MAJOR not available after install"; exit 1; }
log "done; QEMU $(qemu-system-x86_64 --version | head -1 | awk '{print $4}')"
