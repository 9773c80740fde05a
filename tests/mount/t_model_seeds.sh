#!/usr/bin/env bash
# The write path's model-based test (tests/model/wpmodel.py), small and
# deterministic: the minimal sequences it shrank its failures on the code
# before fs/draft.c to (tests/model/regressions.json: bugs 1-3 of the
# draft issue and the others it found; the deadlock's is run 20 times),
# then the sequences of a fixed list of seeds (1-MODEL_SEEDS_COUNT, 150).
# Each runs on a fresh session; every call's answer, the session file's
# entries and .pisessionfs/rejected/ must agree with the model, every call
# within its time limit (a hang prints the daemon's stacks).  Here (and
# under ASan and TSan in CI) nothing is shrunk: a failure prints its
# sequence; tests/stress/t_model.sh is the large, shrinking run.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$T_DIR/model"
out=$T_DIR/model.out
rc=0
timeout -s KILL "$(scaled_int 90)" python3 "$ROOT/tests/model/wpmodel.py" --daemon "$DAEMON" \
	--dir "$T_DIR/model" --replay "$ROOT/tests/model/regressions.json" \
	--seed 1 --count "${MODEL_SEEDS_COUNT:-150}" --seconds "$(scaled_int 60)" --no-shrink --max-failures 10 --max-again 30 >"$out" 2>"$out.err" || rc=$?
before=$FAILS
while IFS= read -r line; do
	case $line in
	"ok - "*) pass ;;
	"not ok - "*) fail "${line#not ok - }" ;;
	"#"*) printf '%s\n' "$line" ;;
	esac
done <"$out"
if ((rc != 0 && FAILS == before)); then
	fail "wpmodel.py exited with status $rc: $(head -c 1500 "$out.err")"
fi
finish
