#!/usr/bin/env bash
# The Helm chart ships copies of the CRDs, the pod security admission policy and the monitoring
# files (alerts, dashboard): Helm reads only
# files inside the chart. deploy/crd and deploy/policy.yaml (generated) and deploy/monitoring stay the single source;
# `make generate` runs this, and `make verify` fails when the copies differ.
set -euo pipefail
cd "$(dirname "$0")/.."
chart=deploy/helm/flinkfsm
rm -f "$chart"/crds/*.yaml
mkdir -p "$chart/crds" "$chart/files"
cp deploy/crd/*.yaml "$chart/crds/"
cp deploy/policy.yaml "$chart/files/policy.yaml"
cp deploy/monitoring/prometheusrule.yaml "$chart/files/prometheusrule.yaml"
cp deploy/monitoring/grafana-dashboard.json "$chart/files/grafana-dashboard.json"
