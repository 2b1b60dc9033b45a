package flinksim

import (
	"mime"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"time"
)

// The commit and revision are 1.20.0's whatever the release simulated: no operator reads them.
const (
	flinkCommit   = "b1fe7b4"
	flinkRevision = flinkCommit + " @ 2024-07-26T09:31:31+02:00"
)

func (jm *JobManager) handleConfig(rc *reqCtx) response {
	return respondOK(map[string]any{
		"refresh-interval": jm.cfg.refreshInterval,
		"timezone-name":    "Coordinated Universal Time",
		"timezone-offset":  0,
		"flink-version":    releaseName(jm.flinkVersion),
		"flink-revision":   flinkRevision,
		"features": map[string]bool{
			"web-submit": true, "web-cancel": true, "web-rescale": true, "web-history": false,
		},
	})
}

func (jm *JobManager) handleOverview(rc *reqCtx) response {
	counts := map[string]int{}
	for _, j := range jm.jobs {
		switch j.state {
		case stateFinished, stateCanceled, stateFailed:
			counts[j.state]++
		default:
			counts["running"]++
		}
	}
	return respondOK(map[string]any{
		"taskmanagers":    jm.taskManagers,
		"slots-total":     jm.totalSlots(),
		"slots-available": max(jm.totalSlots()-jm.usedSlots(), 0),
		"jobs-running":    counts["running"],
		"jobs-finished":   counts[stateFinished],
		"jobs-cancelled":  counts[stateCanceled],
		"jobs-failed":     counts[stateFailed],
		"flink-version":   releaseName(jm.flinkVersion),
		"flink-commit":    flinkCommit,
	})
}

// resourceProfile is ResourceProfileInfo for a number of slots (MB, cores).
func resourceProfile(slots int) map[string]any {
	return map[string]any{
		"cpuCores":          jsonDouble(float64(slots)),
		"taskHeapMemory":    384 * slots,
		"taskOffHeapMemory": 0,
		"managedMemory":     512 * slots,
		"networkMemory":     128 * slots,
		"extendedResources": map[string]any{},
	}
}

func (jm *JobManager) handleTaskManagers(rc *reqCtx) response {
	used := jm.usedSlots()
	tasks := jm.tasksPerTaskManager()
	tms := make([]any, 0, jm.taskManagers)
	const mb = 1 << 20
	for i := 1; i <= jm.taskManagers; i++ {
		busy := min(used, jm.slotsPerTM)
		used -= busy
		free := jm.slotsPerTM - busy
		tm := map[string]any{
			"id":                     jm.taskManagerID(i),
			"path":                   "pekko.tcp://flink@10.0.0." + itoa(i+1) + ":6122/user/rpc/taskmanager_0",
			"dataPort":               6121,
			"jmxPort":                -1,
			"timeSinceLastHeartbeat": rc.now.UnixMilli(),
			"slotsNumber":            jm.slotsPerTM,
			"freeSlots":              free,
			"totalResource":          resourceProfile(jm.slotsPerTM),
			"freeResource":           resourceProfile(free),
			"hardware": map[string]any{
				"cpuCores": 4, "physicalMemory": int64(16384) * mb, "freeMemory": int64(1024) * mb,
				"managedMemory": int64(512*jm.slotsPerTM) * mb,
			},
			"memoryConfiguration": map[string]any{
				"frameworkHeap": 128 * mb, "taskHeap": 384 * jm.slotsPerTM * mb, "frameworkOffHeap": 128 * mb,
				"taskOffHeap": 0, "networkMemory": 128 * jm.slotsPerTM * mb, "managedMemory": 512 * jm.slotsPerTM * mb,
				"jvmMetaspace": 256 * mb, "jvmOverhead": 192 * mb,
				"totalFlinkMemory":   (256 + 1024*jm.slotsPerTM) * mb,
				"totalProcessMemory": (704 + 1024*jm.slotsPerTM) * mb,
			},
		}
		if hasApplications(jm.flinkVersion) {
			tm["assignedTasks"] = tasks[i-1] // 2.3 (FLINK-38717)
		}
		tms = append(tms, tm)
	}
	return respondOK(map[string]any{"taskmanagers": tms})
}

// tasksPerTaskManager counts the tasks deployed on each TaskManager, filling them slot by slot in
// the order the slot counts above do: a slot runs one subtask of each vertex wide enough for it.
func (jm *JobManager) tasksPerTaskManager() []int {
	out := make([]int, jm.taskManagers)
	slot := 0
	for _, j := range jm.jobs {
		if !j.hasSlots {
			continue
		}
		for s := 0; s < j.slots(); s++ {
			for _, p := range j.vertexParallelism {
				if p > s && slot/jm.slotsPerTM < len(out) {
					out[slot/jm.slotsPerTM]++
				}
			}
			slot++
		}
	}
	return out
}

func isSensitiveKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"password", "secret", "token", "apikey", "account.key", "auth-params", "jaas.config"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func (jm *JobManager) handleJobManagerConfig(rc *reqCtx) response {
	cfg := map[string]string{
		"jobmanager.rpc.address":        jm.name,
		"rest.port":                     "8081",
		"taskmanager.numberOfTaskSlots": itoa(jm.slotsPerTM),
		"web.tmpdir":                    strings.TrimSuffix(jm.cfg.uploadDir, "/flink-web-upload"),
	}
	for k, v := range jm.cfg.raw {
		cfg[k] = v
	}
	out := make([]map[string]string, 0, len(cfg))
	for _, k := range sortedKeys(cfg) {
		v := cfg[k]
		if isSensitiveKey(k) {
			v = "******"
		}
		out = append(out, map[string]string{"key": k, "value": v})
	}
	return respondOK(out)
}

// jarFile is a jar in the web upload directory.
type jarFile struct {
	id       string
	uploaded time.Time
}

func (jm *JobManager) jarExists(id string) bool {
	if jm.deleted[id] {
		return false
	}
	for _, f := range jm.uploaded {
		if f.id == id {
			return true
		}
	}
	return jm.imageJars == nil || jm.imageJars[id]
}

func (jm *JobManager) handleJars(rc *reqCtx) response {
	files := append([]jarFile(nil), jm.uploaded...)
	for id := range jm.imageJars {
		files = append(files, jarFile{id: id, uploaded: jm.startedAt})
	}
	sort.SliceStable(files, func(i, j int) bool {
		if !files[i].uploaded.Equal(files[j].uploaded) {
			return files[i].uploaded.After(files[j].uploaded)
		}
		return files[i].id < files[j].id
	})
	out := []any{}
	for _, f := range files {
		// GET /jars lists only "<uuid>_<name>.jar" files, as uploads name them.
		if jm.deleted[f.id] || !strings.Contains(f.id, "_") || !strings.HasSuffix(f.id, ".jar") {
			continue
		}
		out = append(out, map[string]any{
			"id": f.id, "name": f.id[strings.Index(f.id, "_")+1:], "uploaded": f.uploaded.UnixMilli(), "entry": []any{},
		})
	}
	return respondOK(map[string]any{"address": "http://" + jm.name + ":8081", "files": out})
}

func (jm *JobManager) handleJarUpload(rc *reqCtx) response {
	form := rc.upload
	if form == nil || !form.multipart {
		return restError(http.StatusBadRequest, classRestHandler, "Exactly 1 file must be sent, received 0.", nil)
	}
	if form.unknown != "" {
		return restError(http.StatusBadRequest, classRestHandler, "Received unknown attribute "+form.unknown+".", nil)
	}
	names := form.files
	if len(names) != 1 {
		return restError(http.StatusBadRequest, classRestHandler, "Exactly 1 file must be sent, received "+itoa(len(names))+".", nil)
	}
	if !strings.HasSuffix(names[0], ".jar") {
		return restError(http.StatusBadRequest, classRestHandler, "Only Jar files are allowed.", nil)
	}
	id := newUUID() + "_" + names[0]
	jm.uploaded = append(jm.uploaded, jarFile{id: id, uploaded: rc.now})
	return respondOK(map[string]any{"filename": jm.cfg.uploadDir + "/" + id, "status": "success"})
}

// uploadForm is what POST /jars/upload sent, as far as the handler judges it.
type uploadForm struct {
	// multipart is whether the request was multipart/form-data with a boundary.
	multipart bool
	// files are the file names of the file parts, in order.
	files []string
	// unknown is the first form field that is neither a file nor "request".
	unknown string
}

// readUploadForm reads an upload's multipart body as it arrives, keeping the parts' names and
// dropping their content: jars run to hundreds of MiB (fat jars of 200 MiB are common), which
// Flink streams to its upload directory, so the simulator must neither hold one in memory nor
// cut it short. It runs before the handler takes the JobManager's lock, so that a slow upload
// holds up no other call.
func readUploadForm(req *http.Request) *uploadForm {
	form := &uploadForm{}
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return form
	}
	form.multipart = true
	mr := multipart.NewReader(req.Body, params["boundary"])
	for {
		// NextPart skips what is left of the part before.
		part, err := mr.NextPart()
		if err != nil {
			return form
		}
		switch {
		case part.FileName() != "":
			form.files = append(form.files, part.FileName())
		case part.FormName() != "request":
			form.unknown = part.FormName()
			return form
		}
	}
}

func (jm *JobManager) handleJarDelete(rc *reqCtx) response {
	id := rc.params["jarid"]
	if !jm.jarExists(id) {
		return restError(http.StatusBadRequest, classRestHandler,
			"File "+id+" does not exist in "+jm.cfg.uploadDir+".", nil)
	}
	jm.deleted[id] = true
	return respondOK(map[string]any{})
}
