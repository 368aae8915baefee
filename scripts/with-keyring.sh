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
# dbus-run-session starts a private dbus-daemon, runs the inner shell and tears the bus down
# afterwards. The first --unlock creates login.keyring with this password and leaves it unlocked
# (no prompt).
# dbus-daemon's "Failed to set fd limit" notice is harmless in containers and filtered out.
HOME="$KEYRING_HOME" dbus-run-session -- sh -c '
	printf "%s" "ci-keyring-password" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
	HOME="$REAL_HOME" exec "$@"' with-keyring "$@" 2> >(grep -v "Failed to set fd limit" >&2)
