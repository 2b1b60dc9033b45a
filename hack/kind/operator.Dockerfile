# The operator image for a kind cluster (docs/testing.md), built from this checkout:
#   docker build -f hack/kind/operator.Dockerfile -t flinkfsm:dev .
#   kind load docker-image flinkfsm:dev --name flinkfsm
# The chart runs it as `run --config /etc/flinkfsm/config.yaml` with runAsNonRoot and a read-only
# root filesystem: a static binary, a numeric non-root user, nothing written to disk.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o /out/flinkfsm ./cmd/flinkfsm

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/flinkfsm /flinkfsm
USER 65532:65532
ENTRYPOINT ["/flinkfsm"]
