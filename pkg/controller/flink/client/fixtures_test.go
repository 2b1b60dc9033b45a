package client

// Bodies shaped like Flink 1.20's answers (see REST.md §1.1, §4, §5). Stack traces are
// abridged but keep Flink's layout: one JSON string, "\n\tat" frames, "Caused by:" chains and,
// for unmapped exceptions, the "<Exception on server side: ... End of exception on server side>"
// envelope in errors[1].
const (
	overviewBody = `{"taskmanagers":2,"slots-total":4,"slots-available":1,"jobs-running":1,
"jobs-finished":0,"jobs-cancelled":0,"jobs-failed":0,"flink-version":"1.20.0","flink-commit":"b1fe7b4"}`

	jobsBody = `{"jobs":[{"id":"3f2a1b4c5d6e7f8091a2b3c4d5e6f708","status":"RUNNING"},
{"id":"00000000000000000000000000000001","status":"CANCELED"}]}`

	jobDetailsBody = `{"jid":"3f2a1b4c5d6e7f8091a2b3c4d5e6f708","name":"WordCount","isStoppable":false,
"state":"RUNNING","job-type":"STREAMING","start-time":1700000000000,"end-time":-1,"duration":12345,
"maxParallelism":-1,"now":1700000012345,
"timestamps":{"INITIALIZING":1700000000000,"CREATED":1700000000100,"RUNNING":1700000000500,"FAILING":0,
 "FAILED":0,"CANCELLING":0,"CANCELED":0,"FINISHED":0,"RESTARTING":0,"SUSPENDED":0,"RECONCILING":0},
"vertices":[
 {"id":"cbc357ccb763df2852fee8c4fc7d55f2","slotSharingGroupId":"a9f1e2d3c4b5a69788796a5b4c3d2e1f",
  "name":"Source: Socket Stream","maxParallelism":128,"parallelism":1,"status":"RUNNING",
  "start-time":1700000000600,"end-time":-1,"duration":11745,
  "tasks":{"CREATED":0,"SCHEDULED":0,"DEPLOYING":0,"RUNNING":1,"FINISHED":0,"CANCELING":0,
   "CANCELED":0,"FAILED":0,"RECONCILING":0,"INITIALIZING":0},
  "metrics":{"read-bytes":0,"read-bytes-complete":true,"write-bytes":1024,"write-bytes-complete":true,
   "read-records":0,"read-records-complete":true,"write-records":10,"write-records-complete":true,
   "accumulated-backpressured-time":0,"accumulated-idle-time":11000,"accumulated-busy-time":0.0}},
 {"id":"90bea66de1c231edf33913ecd54406c1","slotSharingGroupId":"a9f1e2d3c4b5a69788796a5b4c3d2e1f",
  "name":"Flat Map -> Sink: Print","maxParallelism":128,"parallelism":4,"status":"RUNNING",
  "start-time":1700000000600,"end-time":-1,"duration":11745,
  "tasks":{"CREATED":0,"SCHEDULED":0,"DEPLOYING":1,"RUNNING":3,"FINISHED":0,"CANCELING":0,
   "CANCELED":0,"FAILED":0,"RECONCILING":0,"INITIALIZING":0},
  "metrics":{"read-bytes":1024,"read-bytes-complete":true,"write-bytes":0,"write-bytes-complete":true,
   "read-records":10,"read-records-complete":true,"write-records":0,"write-records-complete":true,
   "accumulated-backpressured-time":0,"accumulated-idle-time":11000,"accumulated-busy-time":0.0}}],
"status-counts":{"CREATED":0,"SCHEDULED":0,"DEPLOYING":0,"RUNNING":2,"FINISHED":0,"CANCELING":0,
 "CANCELED":0,"FAILED":0,"RECONCILING":0,"INITIALIZING":0},
"plan":{"jid":"3f2a1b4c5d6e7f8091a2b3c4d5e6f708","name":"WordCount","type":"STREAMING","nodes":[]}}`

	exceptionsBody = `{"root-exception":"java.lang.RuntimeException: boom\n\tat com.example.WordCount.map(WordCount.java:42)",
"timestamp":1700000005000,"all-exceptions":[],"truncated":false,
"exceptionHistory":{"entries":[{"exceptionName":"java.lang.RuntimeException",
 "stacktrace":"java.lang.RuntimeException: boom\n\tat com.example.WordCount.map(WordCount.java:42)",
 "timestamp":1700000005000,"taskName":"Flat Map -> Sink: Print (2/4)","location":"10.0.0.5:6121",
 "endpoint":"10.0.0.5:6121","taskManagerId":"app-abc123-taskmanager-1-1","failureLabels":{"type":"user"},
 "concurrentExceptions":[{"exceptionName":"java.lang.RuntimeException","stacktrace":"java.lang.RuntimeException: boom",
  "timestamp":1700000005001,"taskName":"Flat Map -> Sink: Print (3/4)","taskManagerId":"app-abc123-taskmanager-1-2",
  "failureLabels":{}}]}],"truncated":false}}`

	taskManagersBody = `{"taskmanagers":[{"id":"app-abc123-taskmanager-1-1",
"path":"pekko.tcp://flink@10.0.0.5:6122/user/rpc/taskmanager_0","dataPort":6121,"jmxPort":-1,
"timeSinceLastHeartbeat":1700000010000,"slotsNumber":2,"freeSlots":1,
"totalResource":{"cpuCores":2.0,"taskHeapMemory":384,"taskOffHeapMemory":0,"managedMemory":512,"networkMemory":128,"extendedResources":{}},
"freeResource":{"cpuCores":1.0,"taskHeapMemory":192,"taskOffHeapMemory":0,"managedMemory":256,"networkMemory":64,"extendedResources":{}},
"hardware":{"cpuCores":4,"physicalMemory":8589934592,"freeMemory":402653184,"managedMemory":536870912},
"memoryConfiguration":{"frameworkHeap":134217728,"taskHeap":402653184,"frameworkOffHeap":134217728,"taskOffHeap":0,
 "networkMemory":134217728,"managedMemory":536870912,"jvmMetaspace":268435456,"jvmOverhead":201326592,
 "totalFlinkMemory":1342177280,"totalProcessMemory":1811939328}}]}`

	checkpointsBody = `{"counts":{"restored":1,"total":7,"in_progress":1,"completed":5,"failed":1},
"summary":{"checkpointed_size":{"min":1,"max":9,"avg":5,"p50":5.0,"p90":9.0,"p95":9.0,"p99":9.0,"p999":9.0},
 "state_size":{"min":1,"max":9,"avg":5,"p50":5.0,"p90":9.0,"p95":9.0,"p99":9.0,"p999":9.0},
 "end_to_end_duration":{"min":10,"max":90,"avg":50,"p50":50.0,"p90":90.0,"p95":90.0,"p99":90.0,"p999":90.0},
 "alignment_buffered":{"min":0,"max":0,"avg":0,"p50":0.0,"p90":0.0,"p95":0.0,"p99":0.0,"p999":0.0},
 "processed_data":{"min":0,"max":0,"avg":0,"p50":0.0,"p90":0.0,"p95":0.0,"p99":0.0,"p999":0.0},
 "persisted_data":{"min":0,"max":0,"avg":0,"p50":0.0,"p90":0.0,"p95":0.0,"p99":0.0,"p999":0.0}},
"latest":{
 "completed":{"className":"completed","id":9,"status":"COMPLETED","is_savepoint":false,"savepointFormat":null,
  "trigger_timestamp":1700000060000,"latest_ack_timestamp":1700000060090,"checkpointed_size":9,"state_size":9,
  "end_to_end_duration":90,"alignment_buffered":0,"processed_data":0,"persisted_data":0,"num_subtasks":5,
  "num_acknowledged_subtasks":5,"checkpoint_type":"CHECKPOINT","tasks":{},
  "external_path":"s3://bucket/ckpt/3f2a1b4c5d6e7f8091a2b3c4d5e6f708/chk-9","discarded":false},
 "savepoint":null,
 "failed":{"className":"failed","id":8,"status":"FAILED","is_savepoint":false,"savepointFormat":null,
  "trigger_timestamp":1700000050000,"latest_ack_timestamp":-1,"checkpointed_size":0,"state_size":0,
  "end_to_end_duration":600000,"alignment_buffered":0,"processed_data":0,"persisted_data":0,"num_subtasks":5,
  "num_acknowledged_subtasks":3,"checkpoint_type":"CHECKPOINT","tasks":{},"failure_timestamp":1700000650000,
  "failure_message":"Checkpoint expired before completing."},
 "restored":{"id":3,"restore_timestamp":1700000000400,"is_savepoint":true,
  "external_path":"s3://bucket/sp/savepoint-3f2a1b-8a68e674325b"}},
"history":[
 {"className":"in_progress","id":10,"status":"IN_PROGRESS","is_savepoint":false,"savepointFormat":null,
  "trigger_timestamp":1700000070000,"latest_ack_timestamp":1700000070010,"checkpointed_size":0,"state_size":0,
  "end_to_end_duration":10,"alignment_buffered":0,"processed_data":0,"persisted_data":0,"num_subtasks":5,
  "num_acknowledged_subtasks":2,"checkpoint_type":"CHECKPOINT","tasks":{}},
 {"className":"completed","id":9,"status":"COMPLETED","is_savepoint":false,"savepointFormat":null,
  "trigger_timestamp":1700000060000,"latest_ack_timestamp":1700000060090,"checkpointed_size":9,"state_size":9,
  "end_to_end_duration":90,"alignment_buffered":0,"processed_data":0,"persisted_data":0,"num_subtasks":5,
  "num_acknowledged_subtasks":5,"checkpoint_type":"CHECKPOINT","tasks":{},
  "external_path":"s3://bucket/ckpt/3f2a1b4c5d6e7f8091a2b3c4d5e6f708/chk-9","discarded":false}]}`

	checkpointingDisabledBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Checkpointing has not been enabled.\n\tat org.apache.flink.runtime.rest.handler.job.checkpoints.CheckpointingStatisticsHandler.handleCheckpointStatsRequest(CheckpointingStatisticsHandler.java:109)\n\tat org.apache.flink.runtime.rest.handler.job.checkpoints.AbstractCheckpointStatsHandler.lambda$handleRequest$0(AbstractCheckpointStatsHandler.java:86)\n"]}`

	jobNotFoundBody = `{"errors":["org.apache.flink.runtime.rest.NotFoundException: Job 3f2a1b4c5d6e7f8091a2b3c4d5e6f708 not found\n\tat org.apache.flink.runtime.rest.handler.job.AbstractExecutionGraphHandler.lambda$handleRequest$1(AbstractExecutionGraphHandler.java:99)\n\tat java.base/java.util.concurrent.CompletableFuture.uniExceptionally(CompletableFuture.java:986)\n\t... 4 more\nCaused by: org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job (3f2a1b4c5d6e7f8091a2b3c4d5e6f708)\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.lambda$requestExecutionGraphInfo$34(Dispatcher.java:1034)\n"]}`

	leaderElectionBody = `{"errors":["Service temporarily unavailable due to an ongoing leader election. Please refresh."]}`

	badJobIDBody = `{"errors":["Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value \"zz\"."]}`

	cancelUnknownJobBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Job could not be found.\n\tat org.apache.flink.runtime.rest.handler.job.JobCancellationHandler.lambda$handleRequest$0(JobCancellationHandler.java:122)\n\tat java.base/java.util.concurrent.CompletableFuture.uniHandle(CompletableFuture.java:934)\nCaused by: org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job (3f2a1b4c5d6e7f8091a2b3c4d5e6f708)\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.cancelJob(Dispatcher.java:820)\n"]}`

	cancelFinishedJobBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Job cancellation failed because the job has already reached another terminal state (FINISHED).\n\tat org.apache.flink.runtime.rest.handler.job.JobCancellationHandler.lambda$handleRequest$0(JobCancellationHandler.java:127)\n\tat java.base/java.util.concurrent.CompletableFuture.uniHandle(CompletableFuture.java:934)\nCaused by: org.apache.flink.runtime.messages.FlinkJobTerminatedWithoutCancellationException: Flink job (3f2a1b4c5d6e7f8091a2b3c4d5e6f708) was not canceled, but instead FINISHED.\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.lambda$cancelJob$14(Dispatcher.java:835)\n"]}`

	cancelTimeoutBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Job cancellation timed out.\n\tat org.apache.flink.runtime.rest.handler.job.JobCancellationHandler.lambda$handleRequest$0(JobCancellationHandler.java:130)\n"]}`

	savepointTriggeredBody = `{"request-id":"8a68e674325b4c1d9e0f1a2b3c4d5e6f"}`

	savepointInProgressBody = `{"status":{"id":"IN_PROGRESS"},"operation":null}`

	savepointCompletedBody = `{"status":{"id":"COMPLETED"},"operation":{"location":"s3://bucket/sp/savepoint-3f2a1b-8a68e674325b"}}`

	savepointFailedBody = `{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{
"class":"java.util.concurrent.CompletionException",
"stack-trace":"java.util.concurrent.CompletionException: org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint triggering task Source: Socket Stream (1/1) of job 3f2a1b4c5d6e7f8091a2b3c4d5e6f708 is not being executed at the moment. Aborting checkpoint. Failure reason: Not all required tasks are currently running.\n\tat java.base/java.util.concurrent.CompletableFuture.encodeThrowable(CompletableFuture.java:315)\n\tat java.base/java.util.concurrent.CompletableFuture.completeThrowable(CompletableFuture.java:320)\nCaused by: org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint triggering task Source: Socket Stream (1/1) of job 3f2a1b4c5d6e7f8091a2b3c4d5e6f708 is not being executed at the moment. Aborting checkpoint. Failure reason: Not all required tasks are currently running.\n\tat org.apache.flink.runtime.checkpoint.DefaultCheckpointPlanCalculator.checkTasksStarted(DefaultCheckpointPlanCalculator.java:143)\n\t... 12 more\n",
"serialized-throwable":"rO0ABXNyAC9vcmcuYXBhY2hlLmZsaW5rLnV0aWwuU2VyaWFsaXplZFRocm93YWJsZQ=="}}}`

	savepointUnknownJobBody = `{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{
"class":"org.apache.flink.runtime.messages.FlinkJobNotFoundException",
"stack-trace":"org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job (3f2a1b4c5d6e7f8091a2b3c4d5e6f708)\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.getJobMasterGateway(Dispatcher.java:1480)\n",
"serialized-throwable":"rO0ABXNy"}}}`

	savepointNoDirBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Config key [state.savepoints.dir] is not set. Property [target-directory] must be provided.\n\tat org.apache.flink.runtime.rest.handler.job.savepoints.SavepointHandlers$SavepointTriggerHandler.triggerOperation(SavepointHandlers.java:191)\n"]}`

	savepointUnknownTriggerBody = `{"errors":["org.apache.flink.runtime.rest.NotFoundException: There is no savepoint operation with triggerId=8a68e674325b4c1d9e0f1a2b3c4d5e6f for job 3f2a1b4c5d6e7f8091a2b3c4d5e6f708.\n\tat org.apache.flink.runtime.rest.handler.job.savepoints.SavepointHandlers$SavepointStatusHandler.lambda$handleRequest$0(SavepointHandlers.java:245)\n"]}`

	submitOKBody = `{"jobid":"3f2a1b4c5d6e7f8091a2b3c4d5e6f708"}`

	missingJarPath = "/tmp/flink-web-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5/flink-web-upload/6b1e2c3d-4f5a-6b7c-8d9e-0f1a2b3c4d5e_wordcount.jar"

	submitMissingJarBody = `{"errors":["Internal server error.","<Exception on server side:\njava.util.concurrent.CompletionException: org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file /tmp/flink-web-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5/flink-web-upload/6b1e2c3d-4f5a-6b7c-8d9e-0f1a2b3c4d5e_wordcount.jar does not exist\n\tat org.apache.flink.runtime.webmonitor.handlers.utils.JarHandlerUtils$JarHandlerContext.toPackagedProgram(JarHandlerUtils.java:226)\n\tat org.apache.flink.runtime.webmonitor.handlers.JarRunHandler.handleRequest(JarRunHandler.java:101)\nCaused by: org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file /tmp/flink-web-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5/flink-web-upload/6b1e2c3d-4f5a-6b7c-8d9e-0f1a2b3c4d5e_wordcount.jar does not exist\n\tat org.apache.flink.runtime.webmonitor.handlers.utils.JarHandlerUtils$JarHandlerContext.toPackagedProgram(JarHandlerUtils.java:226)\n\t... 45 more\n\nEnd of exception on server side>"]}`

	submitEntryClassMissingBody = `{"errors":["Internal server error.","<Exception on server side:\njava.util.concurrent.CompletionException: org.apache.flink.client.program.ProgramInvocationException: The program's entry point class 'com.example.Missing' was not found in the jar file.\n\tat org.apache.flink.runtime.webmonitor.handlers.utils.JarHandlerUtils$JarHandlerContext.toPackagedProgram(JarHandlerUtils.java:232)\nCaused by: org.apache.flink.client.program.ProgramInvocationException: The program's entry point class 'com.example.Missing' was not found in the jar file.\n\tat org.apache.flink.client.program.PackagedProgram.loadMainClass(PackagedProgram.java:481)\nCaused by: java.lang.ClassNotFoundException: com.example.Missing\n\tat java.base/java.net.URLClassLoader.findClass(URLClassLoader.java:445)\n\t... 49 more\n\nEnd of exception on server side>"]}`

	submitDuplicateBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.\n\tat org.apache.flink.runtime.webmonitor.handlers.JarRunHandler.lambda$handleRequest$1(JarRunHandler.java:114)\n\tat java.base/java.util.concurrent.CompletableFuture.uniHandle(CompletableFuture.java:934)\nCaused by: java.util.concurrent.CompletionException: org.apache.flink.util.FlinkRuntimeException: Could not execute application.\n\tat java.base/java.util.concurrent.CompletableFuture.encodeThrowable(CompletableFuture.java:315)\nCaused by: org.apache.flink.util.FlinkRuntimeException: Could not execute application.\n\tat org.apache.flink.client.deployment.application.DetachedApplicationRunner.tryExecuteJobs(DetachedApplicationRunner.java:88)\nCaused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: Failed to execute job 'WordCount'.\n\tat org.apache.flink.client.program.PackagedProgram.callMainMethod(PackagedProgram.java:373)\nCaused by: org.apache.flink.util.FlinkException: Failed to execute job 'WordCount'.\n\tat org.apache.flink.streaming.api.environment.StreamExecutionEnvironment.executeAsync(StreamExecutionEnvironment.java:2450)\nCaused by: org.apache.flink.runtime.client.DuplicateJobSubmissionException: Job has already been submitted.\n\tat org.apache.flink.runtime.client.DuplicateJobSubmissionException.of(DuplicateJobSubmissionException.java:35)\n\t... 12 more\n"]}`
	// submitDuplicateApplicationBody is Flink 2.3.0's answer to a second /jars/:jarid/run with the
	// same jobId, read off a real JobManager (integ/realflink): 2.3 runs every submission as an
	// application whose id is the job's, and refuses the second as a duplicate application.
	submitDuplicateApplicationBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.\n\tat org.apache.flink.runtime.webmonitor.handlers.JarRunHandler.lambda$handleRequest$1(JarRunHandler.java:114)\nCaused by: java.util.concurrent.CompletionException: org.apache.flink.util.FlinkRuntimeException: Could not execute application.\n\tat java.base/java.util.concurrent.CompletableFuture.encodeThrowable(CompletableFuture.java:315)\nCaused by: org.apache.flink.util.FlinkRuntimeException: Could not execute application.\n\tat org.apache.flink.client.deployment.application.DetachedApplicationRunner.tryExecuteJobs(DetachedApplicationRunner.java:88)\nCaused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: Failed to execute job 'flinkfsm-test-job normal'.\n\tat org.apache.flink.client.program.PackagedProgram.callMainMethod(PackagedProgram.java:376)\nCaused by: org.apache.flink.util.FlinkException: Failed to execute job 'flinkfsm-test-job normal'.\n\tat org.apache.flink.streaming.api.environment.StreamExecutionEnvironment.executeAsync(StreamExecutionEnvironment.java:2008)\nCaused by: org.apache.flink.runtime.client.DuplicateApplicationSubmissionException: Application has already been submitted.\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.lambda$submitApplication$9(Dispatcher.java:952)\n"]}`

	submitInternalErrorBody = `{"errors":["Internal server error.","<Exception on server side:\njava.util.concurrent.CompletionException: java.io.IOException: Could not create the BlobServer cache directory.\n\tat java.base/java.util.concurrent.CompletableFuture.encodeThrowable(CompletableFuture.java:315)\n\nEnd of exception on server side>"]}`

	proxyBadGatewayBody = `<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>`
)
