#!/bin/sh
# Runs a model generator into a scratch copy of models/ and compares what it
# writes with the committed files of its folder, both ways: a file that
# differs, one the generator writes that is not committed, or one committed
# that it no longer writes fails. The generators write next to themselves
# (models/DIR/), so a copy of the script in a scratch models/ folder writes
# there and never touches the tree.
# usage: check_generated.sh PYTHON MODELS_DIR GENERATOR DIR
py=$1 models=$2 gen=$3 dir=$4
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/models/$dir" && cp "$models/$gen" "$t/models/" || exit 1
(cd "$t" && "$py" "models/$gen" >/dev/null) || { echo "$gen failed"; exit 1; }
rc=0
for f in $(cd "$t/models/$dir" && find . -type f | sed "s|^\./||" | sort); do
  if [ ! -f "$models/$dir/$f" ]; then echo "$dir/$f: written by $gen, not committed"; rc=1
  elif ! cmp -s "$t/models/$dir/$f" "$models/$dir/$f"; then echo "$dir/$f: differs from what $gen writes"; rc=1; fi
done
for f in $(cd "$models/$dir" && find . -type f | sed "s|^\./||" | sort); do
  [ -f "$t/models/$dir/$f" ] || { echo "$dir/$f: committed, no longer written by $gen"; rc=1; }
done
[ $rc = 0 ] && echo "$dir: every file as $gen writes it"
exit $rc
