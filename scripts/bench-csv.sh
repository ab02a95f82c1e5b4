#!/usr/bin/env bash
# bench-csv.sh — the CSV job family's benchmarks (issue "CSV jobs"), all in one run:
#   1. validate + aggregate in the csv-processor handler (go test -bench BenchmarkValidateAggregate),
#      1M rows in UTF-8 and Shift_JIS: targets ≤ 100 ms, ≥ 10M rows/s, Shift_JIS as fast as UTF-8;
#   2. the whole job through the engine: `jobdesk run --wait` of a generated 1M-row file (UTF-8 and
#      Shift_JIS) until SUCCEEDED, including the csv_users update and the result files, with wall
#      time and peak RSS from /usr/bin/time -v: targets ≤ 1.0 s, ≤ 200 MB;
#   3. Debian's `sqlite3 .import` of the same files, measured the same way, for comparison.
# Usage: scripts/bench-csv.sh [ROWS]   (default 1000000). Needs go, sqlite3, iconv, /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
ROWS="${1:-1000000}"
USERS=50000
GO="${GO:-go}"

for tool in sqlite3 iconv /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-csv: $tool is missing (Debian: sqlite3, libc-bin, time)" >&2; exit 1; }
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== csv-processor handler: validate + aggregate, 1M rows (go test -bench)"
"$GO" test -run '^$' -bench 'BenchmarkValidateAggregate' -benchtime 20x -benchmem ./engine/csvjob | grep -E '^(Benchmark|ok|FAIL)'

echo
echo "== whole job through the engine vs sqlite3 .import ($ROWS rows, $USERS users)"
"$GO" build -o "$tmp/jobdesk" .
# The same file the Go benchmarks use in shape: header, then U + 5 digits, 0–99, 0–999.
awk -v n="$ROWS" -v u="$USERS" 'BEGIN {
	srand(1); print "ユーザーID,ログイン回数,投稿回数"
	for (i = 0; i < n; i++) printf "U%05d,%d,%d\n", 1 + int(rand() * u), int(rand() * 100), int(rand() * 1000)
}' >"$tmp/user-log-utf8.csv"
iconv -f UTF-8 -t CP932 "$tmp/user-log-utf8.csv" >"$tmp/user-log-sjis.csv"

# measure LABEL CMD...: runs CMD under /usr/bin/time -v and prints wall seconds and peak RSS.
measure() {
	local label="$1"; shift
	local out="$tmp/out.txt" tv="$tmp/time.txt"
	if ! /usr/bin/time -v -o "$tv" "$@" >"$out" 2>"$tmp/err.txt"; then
		echo "$label: FAILED" >&2; cat "$out" "$tmp/err.txt" >&2; exit 1
	fi
	local wall cpu rss
	wall="$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.3f", s }' "$tv")"
	cpu="$(awk -F': ' '/(User|System) time \(seconds\)/ { s += $2 } END { printf "%.3f", s }' "$tv")"
	rss="$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$tv")"
	printf '%-44s %8s s %8s s %6s MB\n' "$label" "$wall" "$cpu" "$rss"
}

# wall: from start to exit (for jobdesk: to SUCCEEDED); CPU: user + system time of the process.
printf '%-44s %10s %10s %9s\n' "" "wall" "CPU" "peak RSS"
for enc in utf8 sjis; do
	f="$tmp/user-log-$enc.csv"
	d="$tmp/data-$enc"
	measure "jobdesk run --wait ($enc, $(du -m "$f" | cut -f1) MB)" "$tmp/jobdesk" --data-dir "$d" run --type csv --wait --json "$f"
	grep -q '"status":"SUCCEEDED"' "$tmp/out.txt" || { echo "the $enc job did not succeed:" >&2; cat "$tmp/out.txt" >&2; exit 1; }
	cp "$tmp/out.txt" "$tmp/job-$enc.json"
	measure "sqlite3 .import ($enc)" sqlite3 "$tmp/import-$enc.db" -cmd ".mode csv" ".import $f users"
done
# The jobs' own account: rows, users, time inside the workflow (validation to aggregation).
for enc in utf8 sjis; do
	sed -e 's/.*"totalRecords":\([0-9]*\).*"users":\([0-9]*\).*"processingTimeSeconds":\([0-9.]*\).*/'"$enc"' job: \1 rows, \2 users, \3 s from validation to the table update/' "$tmp/job-$enc.json"
done
echo "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
