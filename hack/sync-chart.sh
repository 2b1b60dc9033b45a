#!/usr/bin/env bash
# The Helm chart ships copies of the CRDs and of the pod security admission policy: Helm reads only
# files inside the chart. deploy/crd (generated) and deploy/policy.yaml stay the single source;
# `make generate` runs this, and `make verify` fails when the copies differ.
set -euo pipefail
cd "$(dirname "$0")/.."
chart=deploy/helm/flinkfsm
rm -f "$chart"/crds/*.yaml
mkdir -p "$chart/crds" "$chart/files"
cp deploy/crd/*.yaml "$chart/crds/"
cp deploy/policy.yaml "$chart/files/policy.yaml"
