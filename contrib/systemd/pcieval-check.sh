#!/bin/sh
# The command of pcieval-check.service: pcieval check writing the results
# document and the run history into the unit's state folder, always, and
# Prometheus metrics into node_exporter's textfile folder only when that
# folder is there. pcieval stops before it measures (exit 2) when an output's
# folder is missing, since a typed path is used as given; but the textfile
# folder comes with prometheus-node-exporter, which the package only
# suggests, and a node without it must still get its nightly results (NHC's
# `check_pcieval --results` reads them). The pcieval package installs this
# as /usr/libexec/pcieval/pcieval-check.sh.
#
#   pcieval-check.sh [PCIEVAL_CHECK_ARGS...]   (the unit passes --quick --quiet)
#
# Environment:
#   STATE_DIRECTORY       where last-results.json and history.sqlite go; systemd
#                         sets it from StateDirectory= (default /var/lib/pcieval)
#   PCIEVAL_TEXTFILE_DIR  node_exporter's --collector.textfile.directory
#                         (default /var/lib/prometheus/node-exporter, Debian's)
#   PCIEVAL               the binary (default /usr/bin/pcieval)
# Exit: pcieval's (0 pass, 1 fail, 2 usage or an output not written, 3
# inconclusive); a missing or read-only textfile folder is one line on
# stderr (the journal), not an error.
set -eu

pcieval=${PCIEVAL:-/usr/bin/pcieval}
state=${STATE_DIRECTORY:-/var/lib/pcieval}
textfile=${PCIEVAL_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}

set -- check "$@" -o "$state/last-results.json" --history "$state/history.sqlite"
# -w as well as -d: under the unit's ProtectSystem=strict a folder left out of
# ReadWritePaths= is there but read-only, and would cost the results the same.
if [ -d "$textfile" ] && [ -w "$textfile" ]; then
  set -- "$@" --prom "$textfile/pcieval.prom"
elif [ -d "$textfile" ]; then
  echo "pcieval-check: $textfile is not writable (ReadWritePaths= of the unit?): metrics not written" >&2
else
  echo "pcieval-check: no $textfile (prometheus-node-exporter not installed?): metrics not written" >&2
fi
exec "$pcieval" "$@"
