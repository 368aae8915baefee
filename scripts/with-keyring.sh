#!/usr/bin/env bash
# Usage: scripts/with-keyring.sh <command...>
# Runs the command on a private D-Bus session bus with an unlocked, throw-away gnome-keyring (the
# Secret Service the keyring tests need). The daemon keeps its files in a temporary directory that
# is removed afterwards; the command itself sees the real HOME. Exit status = the command's.
set -euo pipefail
if ! command -v gnome-keyring-daemon >/dev/null || ! command -v dbus-run-session >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnome-keyring dbus >/dev/null
fi
export REAL_HOME="$HOME"
KEYRING_HOME="$(mktemp -d)"
# The daemon normally exits with its bus, but not always: stop the one started here (recognised
# by its private HOME), then remove its files.
cleanup() {
	for dir in /proc/[0-9]*; do
		[ "$(cat "$dir/comm" 2>/dev/null)" = "gnome-keyring-d" ] || continue
		if (tr '\0' '\n' <"$dir/environ") 2>/dev/null | grep -qxF "HOME=$KEYRING_HOME"; then
			kill "${dir#/proc/}" 2>/dev/null || true
		fi
	done
	rm -rf "$KEYRING_HOME"
}
trap cleanup EXIT
# The bus is private and can start exactly one service: a Secret Service that unlocks the test
# keyring by itself. gnome-keyring-daemon can abort when many clients open sessions at once (an
# upstream race; the refresh tests start 8 processes together). The standard session bus would then
# start a replacement whose keyring is locked, and every later keyring call would fail or wait on an
# unlock prompt nobody answers (a full run hung that way once). On this bus the replacement unlocks.
mkdir -p "$KEYRING_HOME/services"
cat >"$KEYRING_HOME/services/org.freedesktop.secrets.service" <<'SERVICE'
[D-BUS Service]
Name=org.freedesktop.secrets
Exec=/bin/sh -c "printf %s ci-keyring-password | exec gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null"
SERVICE
cat >"$KEYRING_HOME/bus.conf" <<BUS
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=$KEYRING_HOME</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$KEYRING_HOME/services</servicedir>
  <!-- The standard session policy. -->
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
BUS
# dbus-run-session runs the inner shell on that bus and tears the bus down afterwards. The first
# --unlock creates login.keyring with this password and leaves it unlocked (no prompt); a daemon the
# bus starts later unlocks the same file with the same password.
# dbus-daemon's "Failed to set fd limit" notice is harmless in containers and filtered out.
HOME="$KEYRING_HOME" dbus-run-session --config-file="$KEYRING_HOME/bus.conf" -- sh -c '
	printf "%s" "ci-keyring-password" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
	HOME="$REAL_HOME" exec "$@"' with-keyring "$@" 2> >(grep -v "Failed to set fd limit" >&2)
