#!/bin/bash
# Installs what rcomp needs to build, test and run its demo on Debian 12.
set -euo pipefail

packages=(
	# build
	build-essential meson ninja-build pkg-config python3
	libwlroots-dev libwayland-dev wayland-protocols libpixman-1-dev
	libxkbcommon-dev liblz4-dev libzstd-dev libinput-dev libdrm-dev
	libavcodec-dev libavutil-dev libswscale-dev libopus-dev libpulse-dev
	libinih-dev libfcft-dev libdbus-1-dev scdoc
	libngtcp2-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev libisal-dev
	libwebsockets-dev
	# rcomp-gate: logins through PAM; several gates behind Debian's HAProxy
	libpam0g-dev libseccomp-dev haproxy
	# the Debian packages: built and installed into a clean root in the tests
	debhelper fakeroot dpkg-dev ssl-cert adduser libpam-runtime
	# the browsers' door's TLS tests: a certificate made for them
	openssl
	# the browser viewer's tests: Debian's chromium, driven from node
	chromium
	# the test rig and the demo: a headless desktop, real apps, screenshots
	sway foot grim wtype weston wl-clipboard xwayland xterm x11-apps xkb-data fonts-dejavu-core util-linux clang-format
	# a document viewer that opens a dropped PDF (the files tests)
	zathura zathura-pdf-poppler
	# a film player that keeps the screen awake while it plays (the desktop tests)
	mpv
	pulseaudio pulseaudio-utils libsdl2-tests gtk-3-examples
	# a PipeWire host's sound server, for the sessions of a host without pulseaudio
	pipewire pipewire-pulse wireplumber dbus-daemon
	# notifications: the local desktop's daemon and a sender, in the tests
	mako-notifier libnotify-bin
	# prints: each session's CUPS scheduler and Debian's filters; lp on both
	# sides; pdfinfo to count a print's pages
	cups-daemon cups-filters cups-client poppler-utils
	python3-pytest python3-pytest-timeout python3-pytest-xdist
	# tests/netsim's two network namespaces
	iproute2
	# what an installed rcomp is checked with: man pages and shell completion
	man-db groff-base bash-completion zsh fish
	# fuzzing
	clang libclang-rt-14-dev valgrind openssh-server openssh-client
)

# node and npm drive chromium in the tests: Debian's, where the machine has
# none of its own.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
sudo=
if [ "$(id -u)" != 0 ]; then
	sudo=sudo
fi
echo "installing: ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
