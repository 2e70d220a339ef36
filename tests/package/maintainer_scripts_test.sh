#!/usr/bin/env bash
# pcieval's maintainer scripts (packaging/debian/, or the control folder of a
# built package: package_test.sh passes that) run through install, upgrade,
# remove and purge with systemctl, deb-systemd-helper and deb-systemd-invoke
# replaced by stubs on PATH that record their arguments:
#  - install enables and starts nothing; an upgrade reloads systemd and
#    try-restarts the timer only;
#  - remove stops the timer and the service, disables the timer, reloads
#    systemd, deletes the metrics file and keeps /var/lib/pcieval;
#  - purge deletes /var/lib/pcieval and the timer's stamp;
#  - with systemd not running (no /run/systemd/system), or under DPKG_ROOT,
#    systemctl is never called.
# The scripts run unmodified: once with DPKG_ROOT set to a scratch root, and,
# where `unshare -rm` gives a mount namespace, with tmpfs over /run and
# /var/lib so that they act on "/" without touching this machine's.
#   maintainer_scripts_test.sh CONTROL_DIR
set -uo pipefail

in_namespace=0
if [[ "${1:-}" == --in-namespace ]]; then
  # Inside `unshare -rm`: this machine's /run and /var/lib are hidden.
  mount -t tmpfs pcieval-test /run && mount -t tmpfs pcieval-test /var/lib || exit 77
  in_namespace=1
  shift
fi
control=$(cd "$1" && pwd)

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

setup() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/pcieval-maintscripts-test.XXXXXX")
  mkdir -p "$work/stubs"
  for stub in systemctl deb-systemd-helper deb-systemd-invoke; do
    # shellcheck disable=SC2016  # $* and $STUB_LOG are the stub's, expanded when it runs
    printf '#!/bin/sh\necho "%s $*" >>"$STUB_LOG"\n' "$stub" >"$work/stubs/$stub"
    chmod +x "$work/stubs/$stub"
  done
  export STUB_LOG="$work/calls"
}

# run SCRIPT ARGS...: the script as dpkg runs it; the calls it made in $calls.
run() {
  local script=$1
  shift
  : >"$STUB_LOG"
  PATH="$work/stubs:$PATH" DPKG_MAINTSCRIPT_PACKAGE=pcieval DPKG_MAINTSCRIPT_NAME=$script \
    sh "$control/$script" "$@" >"$work/out" 2>&1 || fail "$script $*: exit $?: $(cat "$work/out")"
  calls=$(cat "$STUB_LOG")
}
expect_call() {
  grep -qxF "$1" <<<"$calls" || fail "$2: no '$1' call; calls: ${calls:-none}"
}
expect_no_call() {
  if grep -qE "$1" <<<"$calls"; then fail "$2: calls matching '$1': $calls"; fi
}

# A node with what the units create, under ROOT.
populate() {
  mkdir -p "$1/var/lib/pcieval" "$1/var/lib/prometheus/node-exporter" "$1/var/lib/systemd/timers"
  echo '{}' >"$1/var/lib/pcieval/last-results.json"
  echo 'pcieval_overall 0' >"$1/var/lib/prometheus/node-exporter/pcieval.prom"
  : >"$1/var/lib/systemd/timers/stamp-pcieval-check.timer"
}

# lifecycle LABEL ROOT SYSTEMD(0|1): install, upgrade, remove, purge on ROOT.
lifecycle() {
  local label=$1 root=$2 systemd=$3
  populate "$root"
  run postinst configure
  expect_call "deb-systemd-helper update-state pcieval-check.timer" "$label install"
  expect_no_call ' (enable|start|restart|reenable|unmask)( |$)' "$label install"
  if [[ $systemd == 1 ]]; then
    expect_call "systemctl --system daemon-reload" "$label install"
  else
    expect_no_call '^(systemctl|deb-systemd-invoke) ' "$label install"
  fi

  run prerm upgrade 0.1.0-1
  expect_no_call '.' "$label prerm upgrade"
  run postinst configure 0.1.0-1
  expect_no_call ' (enable|start|restart)( |$)' "$label upgrade"
  if [[ $systemd == 1 ]]; then
    expect_call "deb-systemd-invoke try-restart pcieval-check.timer" "$label upgrade"
    expect_call "systemctl --system daemon-reload" "$label upgrade"
  fi

  run prerm remove
  if [[ $systemd == 1 ]]; then
    expect_call "deb-systemd-invoke stop pcieval-check.timer pcieval-check.service" "$label remove"
  else
    expect_no_call '.' "$label prerm remove"
  fi
  run postrm remove
  expect_call "deb-systemd-helper disable pcieval-check.timer" "$label remove"
  if [[ $systemd == 1 ]]; then
    expect_call "systemctl --system daemon-reload" "$label remove"
  else
    expect_no_call '^systemctl ' "$label remove"
  fi
  [[ ! -e "$root/var/lib/prometheus/node-exporter/pcieval.prom" ]] || fail "$label remove: the metrics file stays"
  [[ -s "$root/var/lib/pcieval/last-results.json" ]] || fail "$label remove: the results were deleted"

  run postrm purge
  expect_call "deb-systemd-helper purge pcieval-check.timer" "$label purge"
  [[ ! -e "$root/var/lib/pcieval" ]] || fail "$label purge: /var/lib/pcieval stays"
  [[ ! -e "$root/var/lib/systemd/timers/stamp-pcieval-check.timer" ]] || fail "$label purge: the timer's stamp stays"
}

setup
trap 'rm -rf "$work"' EXIT
if [[ $in_namespace == 1 ]]; then
  lifecycle "systemd not running" / 0
  mkdir -p /run/systemd/system
  lifecycle "systemd running" / 1
  [[ $failures -eq 0 ]]
  exit
fi

for script in postinst prerm postrm; do
  [[ -f "$control/$script" ]] || { fail "no $script in $control"; continue; }
  [[ -x "$control/$script" ]] || fail "$script is not executable"
  [[ "$(head -n 1 "$control/$script")" == "#!/bin/sh" ]] || fail "$script does not start with #!/bin/sh"
  grep -qx 'set -e' "$control/$script" || fail "$script lacks set -e"
done
[[ $failures -eq 0 ]] || exit 1

# DPKG_ROOT: an install into another root, never this machine's systemd.
export DPKG_ROOT="$work/dpkg-root"
lifecycle "DPKG_ROOT" "$DPKG_ROOT" 0
expect_no_call '^systemctl ' "DPKG_ROOT"
unset DPKG_ROOT

if unshare -rm true 2>/dev/null; then
  unshare -rm bash "${BASH_SOURCE[0]}" --in-namespace "$control"
  rc=$?
  if [[ $rc -eq 77 ]]; then
    echo "no tmpfs in the mount namespace: scripts checked under DPKG_ROOT only"
  elif [[ $rc -ne 0 ]]; then
    fail "on / in a mount namespace (exit $rc): see above"
  else
    echo "checked on / in a mount namespace, with systemd running and not"
  fi
else
  echo "no mount namespace (unshare -rm): scripts checked under DPKG_ROOT only"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "maintainer scripts: install enables nothing; remove stops and disables; purge cleans"
