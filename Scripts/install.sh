#!/usr/bin/env bash
# Installs pushseal: the binary (and pushseal-qr beside it), the man page, the
# completions for bash, zsh and fish, and the systemd units for receive --watch and --listen.
#   Scripts/install.sh            into /usr/local as root, ~/.local otherwise
#   Scripts/install.sh PREFIX     into PREFIX
#   PUSHSEAL_BIN_DIR=DIR Scripts/install.sh PREFIX   install the binaries already built in DIR
# The man page and completions are written by the installed binary itself, so they always
# match it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 1 ]; then
  echo "usage: Scripts/install.sh [PREFIX]" >&2
  exit 64
fi
if [ $# -eq 1 ]; then
  prefix=$1
elif [ "$(id -u)" -eq 0 ]; then
  prefix=/usr/local
else
  prefix=$HOME/.local
fi
case $prefix in
  /*) ;;
  *) prefix=$PWD/$prefix ;;
esac

if [ -n "${PUSHSEAL_BIN_DIR:-}" ]; then
  bin_dir=$PUSHSEAL_BIN_DIR
else
  Scripts/setup.sh
  # shellcheck disable=SC2086
  bin_dir=$(swift build -c release --static-swift-stdlib -Xswiftc -static-executable ${SWIFT_FLAGS:-} --show-bin-path)
fi
for program in pushseal pushseal-qr; do
  [ -x "$bin_dir/$program" ] || { echo "install: $bin_dir/$program is missing; run Scripts/setup.sh" >&2; exit 66; }
done

# Each file goes in under a temporary name and is renamed into place, so a running pushseal
# is never overwritten mid-read and an interrupted install leaves no half-written file.
put() { # mode destination (contents on stdin)
  local destination=$2
  mkdir -p "$(dirname "$destination")"
  cat > "$destination.installing"
  chmod "$1" "$destination.installing"
  mv -f "$destination.installing" "$destination"
  echo "install: $destination" >&2
}
for program in pushseal pushseal-qr; do
  put 0755 "$prefix/bin/$program" < "$bin_dir/$program"
done
pushseal=$prefix/bin/pushseal
"$pushseal" manual | put 0644 "$prefix/share/man/man1/pushseal.1"
"$pushseal" completions bash | put 0644 "$prefix/share/bash-completion/completions/pushseal"
"$pushseal" completions zsh | put 0644 "$prefix/share/zsh/site-functions/_pushseal"
"$pushseal" completions fish | put 0644 "$prefix/share/fish/vendor_completions.d/pushseal.fish"

# System units need root to run (DynamicUser, the hardening); elsewhere they are only shipped.
if [ "$(id -u)" -eq 0 ]; then units=$prefix/lib/systemd/system; else units=$prefix/share/pushseal/systemd; fi
for unit in pushseal-watch.service pushseal-listen.service; do
  sed "s|@BINDIR@|$prefix/bin|g" "systemd/$unit" | put 0644 "$units/$unit"
done

echo "install: done; try 'pushseal --version', 'man pushseal'" >&2
if [ "$(id -u)" -eq 0 ] && [ "$prefix" = /usr/local ]; then
  echo "install: start the services with 'systemctl daemon-reload && systemctl enable --now pushseal-listen' (or pushseal-watch)" >&2
fi
