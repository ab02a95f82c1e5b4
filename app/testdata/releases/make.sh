#!/bin/bash
# make.sh BIN NAME: a data folder written by the JobDesk binary BIN under /jobdesk-fixture/NAME
BIN=$1; R=/jobdesk-fixture/$2; SRC=$(cd "$(dirname "$0")" && pwd)
rm -rf $R; mkdir -p $R/data $R/files; cp "$SRC"/files/* $R/files/; cd $R/files
J="$BIN --data-dir $R/data"
# finished jobs of every family
for f in users.csv bad.csv partial.csv notes.txt report.docx bundle.zip broken.pdf data.bin; do
  timeout 120 $J run --wait $PWD/$f 2>&1 | tail -1
done
timeout 60 $J flow start $PWD/pass.asl.json --input '{"a":2}' --wait 2>&1 | tail -1
# a failed job retried (waits again), a cancelled one, and jobs still waiting
BAD=$($J ls --json 2>/dev/null | python3 -c 'import sys,json
for l in sys.stdin:
  j=json.loads(l)
  if j["name"]=="bad.csv": print(j["id"])')
$J retry $BAD 2>&1 | tail -1
$J run $PWD/waiting.csv $PWD/waiting.txt $PWD/waiting.zip $PWD/waiting.bin $PWD/readme.md $PWD/cancelled.csv 2>&1 | tail -7
CAN=$($J ls --json 2>/dev/null | python3 -c 'import sys,json
for l in sys.stdin:
  j=json.loads(l)
  if j["name"]=="cancelled.csv": print(j["id"])')
$J cancel $CAN 2>&1 | tail -1
$J caption $PWD/photo.png 2>&1 | tail -1
$J generate subgoals --title 'テスト目標' 2>&1 | tail -1
$J ls --all 2>&1
# then: VACUUM the database, gzip it to NAME/jobdesk.db.gz, copy data/csv and data/documents to NAME/
