# The Flink image of `make integ-external` (docs/testing.md): the official Flink image with its
# StateMachineExample.jar where the operator's jar run finds it.
#   docker build -f hack/kind/flink-statemachine.Dockerfile -t flinkfsm/flink-statemachine:1.20 hack/kind
#   kind load docker-image flinkfsm/flink-statemachine:1.20 --name flinkfsm
# A FlinkApplication names its jar by spec.jarName, the jar id Flink's /jars/:jarid/run takes: a file
# in the JobManager's jar directory, <web.upload.dir>/flink-web-upload. The tests set web.upload.dir
# to /opt/flink. Flink checks that the directory is writable by its user (flink, 9999).
ARG FLINK_IMAGE=flink:1.20
FROM ${FLINK_IMAGE}
RUN mkdir -p /opt/flink/flink-web-upload \
 && cp /opt/flink/examples/streaming/StateMachineExample.jar /opt/flink/flink-web-upload/ \
 && chown -R flink:flink /opt/flink/flink-web-upload
