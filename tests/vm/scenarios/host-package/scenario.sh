# The package on a real host: systemd is PID 1; `dpkg -i` installs luod
# (enabled, not started), `systemctl enable --now luod` starts it (READY=1
# after its start-up restore: nothing to restore here), `systemctl status`
# names its state, the unit's ordering, the D-Bus policy, tmpfiles,
# catalog, man page and initramfs hook are in place; `systemctl stop`
# stops it cleanly and `dpkg --purge` leaves nothing of it behind.

KREL=7.3.4+deb13-amd64

# Every file the package installed, and the directories luod made, absent.
purged() {
	local f
	for f in /usr/sbin/luod /usr/bin/luoctl /lib/systemd/system/luod.service \
		/etc/systemd/system/multi-user.target.wants/luod.service /usr/lib/tmpfiles.d/luod.conf \
		/usr/share/dbus-1/system.d/org.luod1.conf /usr/lib/systemd/catalog/luod.catalog \
		/usr/share/initramfs-tools/hooks/luod /usr/share/initramfs-tools/scripts/init-top/luod \
		/usr/share/man/man8/luod.8.gz /var/lib/luod /run/luod /usr/share/doc/luod; do
		if [ -e "$f" ]; then echo "still there: $f"; return 1; fi
	done
}

stage1() {
	local st
	st=$(tb_host_wait_booted)
	tb_check "systemd finished booting ($st)" test "$st" = running
	tb_check_value "PID 1" systemd "$(cat /proc/1/comm)"
	tb_check_value "kernel" "$KREL" "$(uname -r)"
	tb_check "dpkg -i luod.deb" dpkg -i /luod-tb/luod.deb
	tb_check_value "after install, luod.service" enabled "$(systemctl is-enabled luod.service)"
	tb_check_value "... and not started by the postinst" inactive "$(systemctl is-active luod.service)"
	tb_check "systemctl enable --now luod" systemctl enable --now luod
	tb_check_value "luod.service (Type=notify: READY=1 sent)" active "$(systemctl is-active luod.service)"
	systemctl status --no-pager luod >/tmp/status 2>&1
	tb_info </tmp/status
	tb_check "systemctl status: active (running), luod's STATUS idle" \
		sh -c 'grep -q "Active: active (running)" /tmp/status && grep -q "Status: \"idle\"" /tmp/status'
	tb_check "luoctl status: idle" sh -c 'luoctl status | grep -q "state:   idle"'
	tb_check "unit ordered after udev's coldplug trigger" \
		sh -c 'systemctl show -p After --value luod | tr " " "\n" | grep -qx systemd-udev-trigger.service'
	tb_check "unit ordered before libvirtd and virtqemud" \
		sh -c 'systemctl show -p Before --value luod | tr " " "\n" | grep -qx libvirtd.service &&
			systemctl show -p Before --value luod | tr " " "\n" | grep -qx virtqemud.service'
	tb_check "luod owns org.luod1 on the system bus" busctl status org.luod1
	tb_check "D-Bus policy: an unprivileged user reads luod's status" runuser -u nobody -- luoctl status
	tb_check "D-Bus policy: ... but may not call Discard" \
		sh -c '! runuser -u nobody -- luoctl discard 2>/tmp/discard.err'
	cat /tmp/discard.err >/dev/console
	tb_check "tmpfiles: /var/lib/luod 0700, /var/lib/luod/reports 0755" \
		sh -c '[ "$(stat -c %a /var/lib/luod)" = 700 ] && [ "$(stat -c %a /var/lib/luod/reports)" = 755 ]'
	tb_check "journal catalog installed (journalctl --list-catalog)" \
		sh -c 'journalctl --list-catalog 2>/dev/null | grep -q 6313cbabc01e4e02a7fdca3d2a60da04'
	tb_check "man page (man -w luod)" sh -c 'man -w luod | grep -q /usr/share/man/man8/luod.8'
	tb_check "initramfs rebuilt with luod's init-top script (lsinitramfs)" \
		sh -c "lsinitramfs /boot/initrd.img-$KREL | grep -qx 'usr/scripts/init-top/luod\|scripts/init-top/luod'"
	tb_check "journal: luod's start-up lines under its unit" \
		sh -c 'journalctl -b -u luod --no-pager -o cat | grep -q .'
	tb_check "systemctl stop luod" systemctl stop luod
	tb_check_value "after stop, luod.service" inactive "$(systemctl is-active luod.service)"
	tb_check_value "... its last run's result" success "$(systemctl show -p Result --value luod.service)"
	tb_check "dpkg --purge luod" dpkg --purge luod
	tb_check "purged: nothing of luod left" purged
	tb_check "purged: systemd no longer knows luod.service" \
		sh -c '! systemctl cat luod.service >/dev/null 2>&1'
	tb_check "purged: the initramfs rebuilt without luod's script" \
		sh -c "! lsinitramfs /boot/initrd.img-$KREL | grep -q 'init-top/luod'"
	tb_finish
}
