#!/usr/bin/env bash
# Runs the libFuzzer harnesses: tests/fuzz/run.sh SECONDS [HARNESS...]
# (make fuzz: FUZZ_SECONDS each, default 60; make fuzz-smoke: 10 each).
#
# Each harness first runs every input of its corpus directories, then
# mutates for SECONDS:
#   tests/fuzz/work/<h>/         new inputs it finds (first dir: libFuzzer writes
#                                there; git-ignored, kept between runs)
#   tests/fuzz/corpus/<h>/       the committed seeds (tests/fuzz/make-corpus.py)
#   tests/fuzz/regressions/<h>/  reproducers of bugs found (must stay fixed)
# Crash, timeout and leak artefacts go to tests/fuzz/artifacts/<h>/, the log to
# tests/fuzz/artifacts/<h>.log.  One line per harness with its executions; the
# last line is "N passed, M failed"; exit status 1 when a harness failed.
#
# Environment: FUZZ_BIN (directory of the binaries, default build/fuzz),
# FUZZ_PARALLEL=1 (run the harnesses at the same time), FUZZ_ARGS (extra
# libFuzzer flags), FUZZ_KNOWN (names of reported bugs to let through, see
# tests/fuzz/README.md; also applies tests/fuzz/known-ubsan.supp and known-lsan.supp).
set -uo pipefail
cd "$(dirname "$0")/../.."

secs=${1:?usage: tests/fuzz/run.sh SECONDS [HARNESS...]}
shift
bin=${FUZZ_BIN:-build/fuzz}
if (($# > 0)); then
	harnesses=("$@")
else
	harnesses=(fuzz_scan fuzz_session fuzz_render_parse fuzz_parse fuzz_jparse fuzz_sessioninfo)
fi

# Per harness: largest input, seconds before an input counts as a hang.
opts_for() {
	case $1 in
	fuzz_scan) echo "-max_len=8192 -timeout=10" ;;
	fuzz_session) echo "-max_len=32768 -timeout=30" ;;
	fuzz_sessioninfo) echo "-max_len=32768 -timeout=10" ;;
	fuzz_render_parse) echo "-max_len=16384 -timeout=10" ;;
	fuzz_parse) echo "-max_len=16384 -timeout=10" ;;
	*) echo "-timeout=10" ;;
	esac
}

ubsan=${UBSAN_OPTIONS:-}
lsan=${LSAN_OPTIONS:-}
if [[ -n ${FUZZ_KNOWN:-} ]]; then
	ubsan="${ubsan:+$ubsan:}suppressions=$PWD/tests/fuzz/known-ubsan.supp"
	lsan="${lsan:+$lsan:}suppressions=$PWD/tests/fuzz/known-lsan.supp"
fi

run_one() {
	local h=$1 log=tests/fuzz/artifacts/$1.log
	local dirs=("tests/fuzz/work/$h" "tests/fuzz/corpus/$h")
	[[ -d tests/fuzz/regressions/$h ]] && dirs+=("tests/fuzz/regressions/$h")
	local dict=()
	[[ -f tests/fuzz/dict/$h.dict ]] && dict=("-dict=tests/fuzz/dict/$h.dict")
	mkdir -p "tests/fuzz/work/$h" "tests/fuzz/artifacts/$h"
	# shellcheck disable=SC2046,SC2086
	UBSAN_OPTIONS=$ubsan LSAN_OPTIONS=$lsan "$bin/$h" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="tests/fuzz/artifacts/$h/" -rss_limit_mb=2048 "${dict[@]}" \
		$(opts_for "$h") ${FUZZ_ARGS:-} "${dirs[@]}" >"$log" 2>&1
	echo $? >"tests/fuzz/artifacts/$h.rc"
}

passed=0
failed=0
for h in "${harnesses[@]}"; do
	if [[ ! -x $bin/$h ]]; then
		echo "FAIL $h: $bin/$h is not built (make fuzz-build)"
		failed=$((failed + 1))
		continue
	fi
	rm -f "tests/fuzz/artifacts/$h.rc"
	if [[ ${FUZZ_PARALLEL:-0} == 1 ]]; then
		run_one "$h" &
	else
		run_one "$h"
	fi
done
wait

for h in "${harnesses[@]}"; do
	[[ -f tests/fuzz/artifacts/$h.rc ]] || continue
	rc=$(cat "tests/fuzz/artifacts/$h.rc")
	log=tests/fuzz/artifacts/$h.log
	# libFuzzer's final statistics; else its last status line ("#N ...")
	execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	if [[ -z $execs ]]; then
		execs=$(grep -aEo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
	fi
	rate=$(sed -n 's/^stat::average_exec_per_sec: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	cov=$(grep -aEo 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	if [[ $rc == 0 ]] && grep -aq 'DONE' "$log"; then
		passed=$((passed + 1))
		echo "ok   $h: ${execs:-?} executions in ${secs}s (${rate:-?}/s, cov ${cov:-?})"
	else
		failed=$((failed + 1))
		artefact=$(sed -n "s/^artifact_prefix=.*; Test unit written to \(.*\)$/\1/p" "$log" | tail -n 1)
		what=$(grep -aEm1 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|FUZZ INVARIANT' "$log")
		echo "FAIL $h: exit status $rc after ${execs:-?} executions: ${what:-see $log}"
		[[ -n $artefact ]] && echo "     reproducer: $artefact (run: $bin/$h $artefact)"
		echo "     log: $log"
	fi
done
echo "$passed passed, $failed failed"
((failed == 0))
