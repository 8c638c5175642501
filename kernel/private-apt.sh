# kernel/private-apt.sh — sourced: apt-get and apt-cache on a private
# configuration (its own sources list, lists, cache and an empty dpkg
# status) under "$apt_root", so packages of another suite (trixie-backports)
# are downloaded, never installed, on the bookworm host.
#
#   apt_root=DIR; . kernel/private-apt.sh; private_apt_setup SUITE MIRROR
#   private_apt_update            apt-get update of that suite (once a run)
#   apt-get "${aptc[@]}" download PKG=VERSION
#
# Sets the array aptc (the -o options).  Callers log to stderr.
private_apt_setup() {  # private_apt_setup SUITE MIRROR
	mkdir -p "$apt_root"/{etc/preferences.d,lists/partial,archives/partial,debs,cache}
	cat >"$apt_root/etc/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $2 $1 main
SRC
	: >"$apt_root/status"
	aptc=(-o Dir::Etc::SourceList="$apt_root/etc/sources.list"
	      -o Dir::Etc::SourceParts=/dev/null
	      -o Dir::Etc::Preferences="$apt_root/etc/preferences"
	      -o Dir::Etc::PreferencesParts="$apt_root/etc/preferences.d"
	      -o Dir::State::Lists="$apt_root/lists"
	      -o Dir::State::status="$apt_root/status"
	      -o Dir::Cache="$apt_root/cache"
	      -o Dir::Cache::archives="$apt_root/archives"
	      -o APT::Architecture=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
}
private_apt_update() { apt-get "${aptc[@]}" update -qq >&2; }
