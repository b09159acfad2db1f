#!/usr/bin/env bash
# Checks the Kubernetes manifests with what runs without a cluster:
#
#   deploy/kubernetes/check.sh
#
#   1. renders base/ and overlays/stub/ with kubectl's kustomize (fails on a broken
#      kustomization, a patch that matches nothing, a missing file);
#   2. validates every rendered object, plus the Secret and ConfigMap the README has the user
#      make (kubectl create --dry-run=client), against the Kubernetes API schemas of
#      kubernetes-models (npm; types, required fields, enums, formats: not unknown fields), and
#      against what Panoptes relies on (check/validate.mjs: probes on the image's health signal,
#      non-root, --grace within terminationGracePeriodSeconds, the coordinator's Service and
#      name, the token from a Secret);
#   3. shows that step 2 can fail: copies of the rendering with one known fault each must be
#      refused.
# What it cannot check (no cluster here) is listed in deploy/kubernetes/README.md.
# Needs kubectl (Debian: kubernetes-client), node and npm (nodejs npm), installed when missing
# and running as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

missing=()
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
{ command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; } || missing+=(nodejs npm)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "check: needs ${missing[*]}: apt-get install ${missing[*]}" >&2
    exit 2
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
(cd "$here/check" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What the README has the user make by hand, made the same way (values are placeholders).
kubectl create secret generic panoptes-secrets --from-literal=token=check-token \
  --from-literal=api-key= --dry-run=client -o yaml > "$work/made-by-hand.yaml"
echo --- >> "$work/made-by-hand.yaml"
kubectl create configmap panoptes-suite --from-file=suite.jsonl="$repo/evals/math.jsonl" \
  --dry-run=client -o yaml >> "$work/made-by-hand.yaml"

validate() {
  (cd "$here/check" && node validate.mjs) < "$1"
}

for variant in base overlays/stub; do
  out="$work/$(basename "$variant").yaml"
  kubectl kustomize "$here/$variant" > "$out"
  { cat "$out"; echo ---; cat "$work/made-by-hand.yaml"; } > "$out.all"
  echo "== $variant"
  validate "$out.all"
done

# Each fault must be refused; a check that passes them checks nothing.
expect_refused() {
  local what=$1 file=$2
  if validate "$file" > "$work/refused.log" 2>&1; then
    echo "check: FAILED: a rendering with $what passed the validation" >&2
    exit 1
  fi
  echo "refused, as it should be: $what ($(grep -m1 problem: "$work/refused.log"))"
}
echo "== faults that must be refused"
rendered="$work/base.yaml"
sed 's/^  replicas: 2$/  replicas: two/' "$rendered" > "$work/fault1.yaml"
expect_refused "a string for the Deployment's replicas" "$work/fault1.yaml"
sed 's/--grace=90s/--grace=115s/' "$rendered" > "$work/fault2.yaml"
expect_refused "a worker --grace that leaves no time for the model server's stop" "$work/fault2.yaml"
sed 's/^    app.kubernetes.io\/component: coordinator$/    app.kubernetes.io\/component: coordinatr/' "$rendered" > "$work/fault3.yaml"
expect_refused "a Service that selects no coordinator pod" "$work/fault3.yaml"
sed 's/command: \[\/app\/bin\/panoptes-health, "9464", \/metrics\]/command: [\/bin\/true]/' "$rendered" > "$work/fault4.yaml"
sed -i 's/- \/app\/bin\/panoptes-health/- \/bin\/true/' "$work/fault4.yaml"
expect_refused "probes that are not the health signal" "$work/fault4.yaml"
sed 's/^      restartPolicy: OnFailure$/      restartPolicy: Sometimes/' "$rendered" > "$work/fault5.yaml"
expect_refused "a restartPolicy Kubernetes does not have" "$work/fault5.yaml"
for i in 1 2 3 4 5; do
  cmp -s "$rendered" "$work/fault$i.yaml" && { echo "check: FAILED: fault $i changed nothing in the rendering (its sed no longer matches)" >&2; exit 1; }
done
echo "check: OK"
