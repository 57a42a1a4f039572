#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs each for FUZZ_SECONDS (default 600).
# Seeds: Fuzz/Seeds/TARGET, plus ../shared/fixtures where it exists (read only: new inputs go to
# .build-fuzz/corpus/TARGET). A finding is written to .build-fuzz/artifacts/ and fails the run; replay it with
# `swift run fuzz-TARGET FILE`, and make it a test.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
SECONDS_EACH="${FUZZ_SECONDS:-600}"
# A fixed seed (FUZZ_SEED, as CI sets) makes a short run repeat the same mutations.
SEED_OPTION=()
[ -n "${FUZZ_SEED:-}" ] && SEED_OPTION=(-seed="$FUZZ_SEED")
TARGETS="${FUZZ_TARGETS:-predicate xcode-model json-model compiled-model data trace store}"
SCRATCH=.build-fuzz
FIXTURES=../shared/fixtures

# The coverage flags are given explicitly: with --sanitize=fuzzer alone, a fresh build here linked binaries without
# coverage counters (libFuzzer then says "no interesting inputs") until a module was recompiled.
FLAGS=(--sanitize=fuzzer --sanitize=address -Xswiftc -DFUZZING -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table)
for target in $TARGETS; do
    "$SWIFT" build "${FLAGS[@]}" --product "fuzz-$target" --scratch-path "$SCRATCH"
done
BIN="$("$SWIFT" build "${FLAGS[@]}" --scratch-path "$SCRATCH" --show-bin-path)"
# A binary linked without counters is rebuilt once from freshly compiled sources (that has always mended it);
# if it still has none, it runs anyway, with a warning: it still checks the seeds and random inputs.
source_folder() {
    case "$1" in
        predicate) echo PredicateFuzzer ;; xcode-model) echo XcodeModelFuzzer ;; json-model) echo JSONModelFuzzer ;;
        compiled-model) echo CompiledModelFuzzer ;; data) echo DataFuzzer ;; trace) echo TraceFuzzer ;; store) echo StoreFuzzer ;;
    esac
}
for target in $TARGETS; do
    if ! readelf -S "$BIN/fuzz-$target" | grep -q __sancov_cntrs; then
        touch Fuzz/"$(source_folder "$target")"/*.swift Fuzz/FuzzSupport/*.swift
        "$SWIFT" build "${FLAGS[@]}" --product "fuzz-$target" --scratch-path "$SCRATCH"
        readelf -S "$BIN/fuzz-$target" | grep -q __sancov_cntrs \
            || echo "fuzz: WARNING: fuzz-$target was linked without coverage counters; libFuzzer runs it without guidance" >&2
    fi
done

# Fixture seeds: the predicate strings one per file; the models, stores' models and SQL debug shapes as they are.
seeds_from_fixtures() {
    local target="$1" out="$SCRATCH/seeds/$target"
    rm -rf "$out"; mkdir -p "$out"
    [ -d "$FIXTURES" ] || { echo "fuzz: $FIXTURES is absent; $target runs on its own seeds only" >&2; return; }
    case "$target" in
        predicate)
            [ -f "$FIXTURES/predicates.jsonl" ] && python3 - "$FIXTURES/predicates.jsonl" "$out" <<'PY'
import hashlib, json, os, sys
for line in open(sys.argv[1], encoding="utf-8"):
    text = json.loads(line)["format"]
    open(os.path.join(sys.argv[2], hashlib.sha1(text.encode()).hexdigest()), "w", encoding="utf-8").write(text)
PY
            ;;
        xcode-model)
            find "$FIXTURES" \( -name '*.xml' -o -name contents \) -type f -size -1M -exec cp {} "$out"/ \; 2>/dev/null || true
            ;;
        compiled-model)
            find "$FIXTURES/coredata-stores" -name '*.mom' -type f -exec cp {} "$out"/ \; 2>/dev/null || true
            ;;
    esac
}

status=0
for target in $TARGETS; do
    seeds_from_fixtures "$target"
    mkdir -p "$SCRATCH/corpus/$target" "$SCRATCH/artifacts"
    echo "fuzz-$target: ${SECONDS_EACH}s"
    log="$SCRATCH/fuzz-$target.log"
    if ASAN_OPTIONS=detect_leaks=0 "$BIN/fuzz-$target" "$SCRATCH/corpus/$target" "Fuzz/Seeds/$target" "$SCRATCH/seeds/$target" \
        -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
        -artifact_prefix="$SCRATCH/artifacts/$target-" -print_final_stats=1 "${SEED_OPTION[@]}" >"$log" 2>&1; then
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' '; echo
    else
        status=1
        echo "fuzz-$target found a problem (log: $log):"
        grep -E 'Fatal error|ERROR: |SUMMARY|Test unit written' "$log" | head -8
    fi
done
exit $status
