# test/harness/cluster.sh -- the cluster harness for shell scripts (sourced).
#
#   source test/harness/cluster.sh
#   pgc init DIR [--regress-conf] [--set 'K = V']...   see pgcluster.py --help
#   pgc start DIR;  pgc psql DIR -d postgres -c '...';  pgc run DIR CMD...
#   pgc stop DIR [--mode immediate];  pgc kill9 DIR;  pgc destroy DIR
#
# Everything is done by test/harness/pgcluster.py (one implementation for the
# shell and the Python tests); this file only names it.
HARNESS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -x /usr/bin/python3 ]]; then HARNESS_PYTHON=/usr/bin/python3; else HARNESS_PYTHON=python3; fi
pgc() { "$HARNESS_PYTHON" "$HARNESS_DIR/pgcluster.py" "$@"; }
