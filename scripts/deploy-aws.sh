#!/usr/bin/env bash
# Deploys JobDesk's cloud backend (assets/deploy/template.yaml) to an AWS account, the steps of
# assets/deploy/README.md in one go:
#   1. builds the Lambda zip (scripts/lambda-zip.sh arm64), or takes --lambda-zip FILE;
#   2. packages the template with the AWS CLI's `cloudformation package` (each function's code
#      is the zip, each state machine's definition its assets/workflows file), uploading to
#      --artifact-bucket;
#   3. creates a change set, shows what it changes, and executes it once confirmed (--yes);
#   4. prints the stack's events until the stack is complete (or has failed: exit 1);
#   5. writes the stack's outputs to stack.json (--outputs FILE) and, with --data-dir DIR,
#      cloud.json there through `jobdesk cloud config --from-stack-outputs`.
# --package-only FILE stops after step 2 and writes the packaged template to FILE;
# --s3-endpoint-url URL sends the uploads of step 2 to an S3-compatible server (the tests).
#
# Usage: scripts/deploy-aws.sh --stack-name NAME --artifact-bucket BUCKET [--region REGION]
#          [--profile PROFILE] [--alarm-email ADDRESS] [--parameter KEY=VALUE]... [--yes]
#          [--outputs stack.json] [--data-dir DIR] [--lambda-zip FILE]
#          [--package-only FILE] [--s3-endpoint-url URL]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

usage() { sed -n '/^# Usage:/,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "deploy-aws: $*" >&2; exit 2; }

stack="" bucket="" region="" profile="" email="" yes=0 outputs="stack.json" data_dir=""
zip="" package_only="" endpoint=""
params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stack-name) stack="${2:-}"; shift 2 ;;
    --artifact-bucket) bucket="${2:-}"; shift 2 ;;
    --region) region="${2:-}"; shift 2 ;;
    --profile) profile="${2:-}"; shift 2 ;;
    --alarm-email) email="${2:-}"; shift 2 ;;
    --parameter) [[ "${2:-}" == *=* ]] || die "--parameter takes KEY=VALUE, not '${2:-}'"; params+=("$2"); shift 2 ;;
    --yes) yes=1; shift ;;
    --outputs) outputs="${2:-}"; shift 2 ;;
    --data-dir) data_dir="${2:-}"; shift 2 ;;
    --lambda-zip) zip="${2:-}"; shift 2 ;;
    --package-only) package_only="${2:-}"; shift 2 ;;
    --s3-endpoint-url) endpoint="${2:-}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "deploy-aws: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -n "$stack" ] || die "--stack-name is required"
[ -n "$bucket" ] || die "--artifact-bucket is required (a bucket of yours in the stack's region for the packaged code)"
[[ "$stack" =~ ^[A-Za-z][A-Za-z0-9-]{0,39}$ ]] || die "the stack name '$stack' must start with a letter and hold at most 40 letters, digits and hyphens (function names are STACK-…, at most 64 characters)"
[ -z "$email" ] || params+=("AlarmEmail=$email")
[ -n "$email" ] || [ -n "$package_only" ] || echo "deploy-aws: no --alarm-email: the alarms notify a topic nobody is subscribed to" >&2

aws_args=()
[ -n "$region" ] && aws_args+=(--region "$region")
[ -n "$profile" ] && aws_args+=(--profile "$profile")
# Debian's AWS CLI v2 (/usr/bin/aws) when there, as the tests use it; else the one on PATH.
AWS="${AWS:-$( [ -x /usr/bin/aws ] && echo /usr/bin/aws || command -v aws || true)}"
[ -n "$AWS" ] || die "the AWS CLI (aws) is not installed"

# 1. The code, staged with the template and the workflows as the template's paths expect.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/assets/deploy" "$stage/assets/workflows" "$stage/dist"
if [ -z "$zip" ]; then
  echo "== building the Lambda zip (scripts/lambda-zip.sh arm64)"
  "$root/scripts/lambda-zip.sh" arm64
  zip="$root/dist/lambda-arm64.zip"
fi
[ -f "$zip" ] || die "the Lambda zip $zip does not exist"
! command -v unzip >/dev/null || unzip -l "$zip" 2>/dev/null | awk '{print $4}' | grep -qx bootstrap || die "$zip holds no bootstrap at its root"
cp "$zip" "$stage/dist/lambda-arm64.zip"
cp "$root/assets/deploy/template.yaml" "$stage/assets/deploy/"
cp "$root"/assets/workflows/*.asl.json "$stage/assets/workflows/"

# 2. Package: upload the zip and the workflow files, write the template that names them.
packaged="${package_only:-$stage/packaged.yaml}"
echo "== packaging into s3://$bucket"
if [ -z "$endpoint" ]; then
  "$AWS" "${aws_args[@]}" cloudformation package --template-file "$stage/assets/deploy/template.yaml" \
    --s3-bucket "$bucket" --output-template-file "$packaged" >/dev/null
else
  # The CLI's package command takes no endpoint for S3: run its own exporter and uploader with
  # an S3 client for the endpoint (Debian's awscli, in its Python).
  /usr/bin/python3 - "$stage/assets/deploy/template.yaml" "$bucket" "$packaged" "$endpoint" "$region" "$profile" <<'PY'
import os, sys
import awscli  # noqa: F401 (makes the CLI's botocore importable)
from botocore.client import Config
import botocore.session
from awscli.customizations.cloudformation.artifact_exporter import Template
from awscli.customizations.cloudformation.yamlhelper import yaml_dump
from awscli.customizations.s3uploader import S3Uploader

template, bucket, out, endpoint, region, profile = sys.argv[1:7]
session = botocore.session.Session(profile=profile or None)
client = session.create_client("s3", region_name=region or None, endpoint_url=endpoint,
                               config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
exported = Template(os.path.basename(template), os.path.dirname(os.path.abspath(template)),
                    S3Uploader(client, bucket)).export()
with open(out, "w") as f:
    f.write(yaml_dump(exported))
PY
fi
grep -q "CodeUri: s3://$bucket/" "$packaged" || die "the packaged template names no uploaded code"
if [ -n "$package_only" ]; then
  echo "packaged template: $package_only"
  exit 0
fi

# 3. A change set, shown, then executed.
echo "== creating a change set for stack $stack"
set +e
created="$("$AWS" "${aws_args[@]}" cloudformation deploy --template-file "$packaged" --stack-name "$stack" \
  --s3-bucket "$bucket" --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND \
  --no-execute-changeset --no-fail-on-empty-changeset \
  ${params[@]+--parameter-overrides "${params[@]}"} 2>&1)"
rc=$?
set -e
echo "$created"
[ $rc -eq 0 ] || exit 1
changeset="$(grep -o 'arn:aws[a-z-]*:cloudformation:[^ ]*:changeSet/[^ ]*' <<<"$created" | head -1 || true)"
if [ -n "$changeset" ]; then
  "$AWS" "${aws_args[@]}" cloudformation describe-change-set --change-set-name "$changeset" \
    --query 'Changes[].ResourceChange.[Action,LogicalResourceId,ResourceType,Replacement]' --output table
  if [ $yes -ne 1 ]; then
    read -r -p "Execute this change set? [y/N] " answer
    [[ "$answer" == [yY]* ]] || { echo "Not executed; the change set stays for review: $changeset"; exit 0; }
  fi
  since="$(date -u +%Y-%m-%dT%H:%M:%S)"
  "$AWS" "${aws_args[@]}" cloudformation execute-change-set --change-set-name "$changeset"

  # 4. Progress: every new event of the stack until it settles.
  echo "== deploying (events as they come)"
  seen=""
  while :; do
    status="$("$AWS" "${aws_args[@]}" cloudformation describe-stacks --stack-name "$stack" --query 'Stacks[0].StackStatus' --output text)"
    events="$("$AWS" "${aws_args[@]}" cloudformation describe-stack-events --stack-name "$stack" --max-items 50 \
      --query "reverse(StackEvents[?Timestamp>='$since'].[EventId,Timestamp,ResourceStatus,LogicalResourceId,ResourceStatusReason])" --output text)"
    while IFS=$'\t' read -r id ts st res reason; do
      [ -n "$id" ] || continue
      case "$seen" in *"|$id|"*) continue ;; esac
      seen="$seen|$id|"
      printf '%s  %-28s %s %s\n' "${ts%%.*}" "$st" "$res" "$( [ "$reason" = None ] || echo "$reason")"
    done <<<"$events"
    case "$status" in
      *_IN_PROGRESS) sleep 10 ;;
      CREATE_COMPLETE|UPDATE_COMPLETE) echo "stack $stack: $status"; break ;;
      *) echo "stack $stack: $status — see the events above" >&2; exit 1 ;;
    esac
  done
fi

# 5. The outputs, and cloud.json.
"$AWS" "${aws_args[@]}" cloudformation describe-stacks --stack-name "$stack" >"$outputs"
echo "stack outputs: $outputs"
if [ -n "$data_dir" ]; then
  jd="${JOBDESK:-$(command -v jobdesk || echo "$root/bin/jobdesk")}"
  [ -x "$jd" ] || die "jobdesk is not built (make build), so cloud.json was not written: run jobdesk cloud config --from-stack-outputs $outputs"
  "$jd" --data-dir "$data_dir" cloud config --from-stack-outputs "$outputs" ${profile:+--profile "$profile"}
fi
echo "next: confirm the alarm e-mail subscription, then run jobdesk cloud status on a desktop (assets/deploy/README.md)"
