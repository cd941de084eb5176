# Sourced by the scripts that need Debian packages: `install_missing WHO PACKAGE...` installs
# those given (already filtered to the missing ones) with apt, as root or through sudo.
install_missing() {
  local who=$1
  shift
  [ $# -gt 0 ] || return 0
  echo "$who: installing $*" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
