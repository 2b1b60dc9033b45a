package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseSteadyAgain parses args as main does, -steady-again alone.
func parseSteadyAgain(args ...string) (steadyAgainFlag, error) {
	var f steadyAgainFlag
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&f, "steady-again", "")
	return f, fs.Parse(args)
}

func TestSteadyAgainVariantsAreKeptInTheOrderGiven(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "flinkfsm-old")
	require.NoError(t, os.WriteFile(old, []byte("#!/bin/sh\n"), 0o755))
	// A relative path is made absolute, as exec would otherwise look a bare name up in $PATH.
	t.Chdir(dir)

	zero := 0
	got, err := parseSteadyAgain("-steady-again", "base", "-steady-again", "gogc100:GOGC=100,GOMAXPROCS=3",
		"-steady-again", "old:binary=flinkfsm-old,GODEBUG=gctrace=1", "-steady-again", "empty:GOGC=",
		"-steady-again", "w12:config.workers=12,GOGC=150,config.kubeAPIQPS=400", "-steady-again", "equal:nice=0")
	require.NoError(t, err)
	require.Equal(t, steadyAgainFlag{
		{Name: "base"},
		{Name: "gogc100", Env: []string{"GOGC=100", "GOMAXPROCS=3"}},
		{Name: "old", Env: []string{"GODEBUG=gctrace=1"}, Binary: old},
		{Name: "empty", Env: []string{"GOGC="}},
		{Name: "w12", Env: []string{"GOGC=150"}, Config: map[string]string{"workers": "12", "kubeAPIQPS": "400"}},
		{Name: "equal", Nice: &zero},
	}, got)
	require.Equal(t, "base gogc100:GOGC=100,GOMAXPROCS=3 old:GODEBUG=gctrace=1,binary="+old+" empty:GOGC= "+
		"w12:GOGC=150,config.kubeAPIQPS=400,config.workers=12 equal:nice=0", got.String())
}

func TestSteadyAgainRefusesBadVariantsNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	notExecutable := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notExecutable, []byte("x"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{""}, "no NAME"},
		{[]string{":GOGC=100"}, "no NAME"},
		{[]string{"a b"}, `variant name "a b"`},
		{[]string{"x:"}, `want KEY=VALUE, not ""`},
		{[]string{"x:GOGC"}, `want KEY=VALUE, not "GOGC"`},
		{[]string{"x:=100"}, `want KEY=VALUE, not "=100"`},
		{[]string{"x:GOGC=100,"}, `want KEY=VALUE, not ""`},
		{[]string{"x:GOGC=50,GOGC=100"}, "GOGC given twice"},
		{[]string{"x:binary="}, "binary= names no file"},
		{[]string{"x:config.=12"}, "want config.KEY=VALUE"},
		{[]string{"x:config.workers="}, "want config.KEY=VALUE"},
		{[]string{"x:config.workers=8,config.workers=12"}, "config.workers given twice"},
		{[]string{"x:binary=" + filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"x:binary=" + dir}, "not an executable file"},
		{[]string{"x:binary=" + notExecutable}, "not an executable file"},
		{[]string{"base", "base:GOGC=100"}, `variant "base" given twice`},
		{[]string{"x:nice=low"}, "want nice=N"},
		{[]string{"x:nice=20"}, "want nice=N"},
	} {
		var args []string
		for _, a := range c.args {
			args = append(args, "-steady-again", a)
		}
		_, err := parseSteadyAgain(args...)
		require.Error(t, err, "%q", c.args)
		require.Contains(t, err.Error(), "-steady-again", "%q", c.args)
		require.Contains(t, err.Error(), c.want, "%q", c.args)
	}
}

func TestSteadyAgainVariantsRuntimeIsTheBenchsWithTheVariantsOverIt(t *testing.T) {
	bench := map[string]string{"GOGC": "50", "GOMEMLIMIT": "2GiB"}
	got := variantRuntime(func(k string) string { return bench[k] }, []string{"GOGC=100", "GOMAXPROCS=3", "OTHER=1"})
	require.Equal(t, map[string]string{"GOGC": "100", "GOMEMLIMIT": "2GiB", "GOMAXPROCS": "3"}, got)
}

func TestSteadyAgainResultsAndTheirTable(t *testing.T) {
	st := func(p99 float64) *steadyResult {
		return &steadyResult{ReconcileP50Milli: 1, ReconcileP90Milli: 5, ReconcileP99Milli: p99, FlinkCallP99Milli: 7,
			Memory: memory{RSSMiB: 300, HeapInuseMiB: 200},
			Processes: environmentFigures{WindowSeconds: 100,
				Processes: map[string]processFigures{"operator": {CPUSeconds: 42}}}}
	}
	r := results{SteadyAgain: []steadyAgainResult{
		{steadyAgainVariant: steadyAgainVariant{Name: "gogc100", Env: []string{"GOGC=100"}},
			RuntimeEnvironment: map[string]string{"GOGC": "100"}, AllObservedSeconds: 12.5, Steady: st(30)},
		{steadyAgainVariant: steadyAgainVariant{Name: "old", Binary: "/tmp/old"}, Error: "the operator ended (exit status 2)"},
	}}
	data, err := json.Marshal(r)
	require.NoError(t, err)
	var back struct {
		SteadyAgain []map[string]any `json:"steadyAgain"`
	}
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, "gogc100", back.SteadyAgain[0]["name"])
	require.Equal(t, []any{"GOGC=100"}, back.SteadyAgain[0]["env"])
	require.Equal(t, 12.5, back.SteadyAgain[0]["allObservedSeconds"])
	require.Contains(t, back.SteadyAgain[0], "steady")
	require.Equal(t, "/tmp/old", back.SteadyAgain[1]["binary"])
	require.NotContains(t, back.SteadyAgain[1], "steady")

	var out bytes.Buffer
	printSteadyAgain(&out, st(20), r.SteadyAgain)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5, out.String())
	require.Contains(t, lines[2], "1.0 / 5.0 / 20.0 ms")
	require.Contains(t, lines[3], "GOGC=100")
	require.Contains(t, lines[3], "12.50 s")
	require.Contains(t, lines[3], "1.0 / 5.0 / 30.0 ms")
	require.Contains(t, lines[3], "0.42 cores")
	require.Contains(t, lines[3], "300 MiB")
	require.Contains(t, lines[4], "FAILED: the operator ended")
}

func TestSteadyAgainProfilesKeepCsFilesApart(t *testing.T) {
	b := &bench{}
	require.Equal(t, "operator-cpu.pprof", b.profileName("operator-cpu.pprof"))
	b.profileTag = "gogc100"
	require.Equal(t, "operator-cpu-gogc100.pprof", b.profileName("operator-cpu.pprof"))
	require.Equal(t, "operator-trace-gogc100.out", b.profileName("operator-trace.out"))
}
