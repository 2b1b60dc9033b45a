package main

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// (g), -steady-again: the steady state of (c) measured again on the same applications, once for
// each variant of the operator, one after the other. At 10,000 applications the reconcile p99 of
// two runs of the whole bench differs more than that of two operator settings, and a run takes
// more than an hour; on one fleet, with a control among the variants, the settings can be told
// apart.

// steadyAgainVariant is one -steady-again NAME[:KEY=VALUE,...]: the operator run with Env added to
// its environment and, when Binary is set, that binary run instead of the environment's own.
type steadyAgainVariant struct {
	Name string `json:"name"`
	// Env is the KEY=VALUE pairs as given, binary= left out.
	Env []string `json:"env,omitempty"`
	// Binary is binary=PATH made absolute: a bare name would otherwise be looked up in $PATH,
	// not where the check at start-up found it.
	Binary string `json:"binary,omitempty"`
	// Config is config.KEY=VALUE: keys of the operator's config changed for the variant
	// (config.workers=12).
	Config map[string]string `json:"config,omitempty"`
	// Nice is nice=N: the variant's operator runs at this niceness instead of -operator-nice's.
	Nice *int `json:"nice,omitempty"`
}

// steadyAgainFlag collects the variants in the order given.
type steadyAgainFlag []steadyAgainVariant

func (f *steadyAgainFlag) String() string {
	if f == nil {
		return ""
	}
	var parts []string
	for _, v := range *f {
		parts = append(parts, v.String())
	}
	return strings.Join(parts, " ")
}

// String is the variant as the flag gives it, the binary made absolute.
func (v steadyAgainVariant) String() string {
	if s := v.settings(); s != "" {
		return v.Name + ":" + s
	}
	return v.Name
}

// settings are the variant's KEY=VALUE, comma-separated, binary= last; "" for none.
func (v steadyAgainVariant) settings() string {
	settings := append([]string(nil), v.Env...)
	for _, k := range slices.Sorted(maps.Keys(v.Config)) {
		settings = append(settings, configPrefix+k+"="+v.Config[k])
	}
	if v.Nice != nil {
		settings = append(settings, "nice="+strconv.Itoa(*v.Nice))
	}
	if v.Binary != "" {
		settings = append(settings, "binary="+v.Binary)
	}
	return strings.Join(settings, ",")
}

// configPrefix marks a variant's setting of the operator's config rather than its environment.
const configPrefix = "config."

// variantName is what a name may hold: it labels the report's rows and ends up in file names.
var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Set parses one variant. The flag package names -steady-again in what it prints of the error, at
// start-up: a misspelt binary fails in the first second rather than after an hour of the run.
func (f *steadyAgainFlag) Set(value string) error {
	v, err := parseVariant(value, os.Stat)
	if err != nil {
		return err
	}
	for _, other := range *f {
		if other.Name == v.Name {
			return fmt.Errorf("variant %q given twice: each needs a name of its own", v.Name)
		}
	}
	*f = append(*f, v)
	return nil
}

// parseVariant reads NAME[:KEY=VALUE,KEY=VALUE...]; stat tells whether binary=PATH exists.
func parseVariant(value string, stat func(string) (os.FileInfo, error)) (steadyAgainVariant, error) {
	name, settings, hasSettings := strings.Cut(value, ":")
	if name == "" {
		return steadyAgainVariant{}, fmt.Errorf("want NAME[:KEY=VALUE,...], not %q: no NAME", value)
	}
	if !variantName.MatchString(name) {
		return steadyAgainVariant{}, fmt.Errorf("variant name %q: want letters, digits, '.', '_' and '-'", name)
	}
	v := steadyAgainVariant{Name: name}
	if !hasSettings {
		return v, nil
	}
	seen := map[string]bool{}
	for _, setting := range strings.Split(settings, ",") {
		key, val, ok := strings.Cut(setting, "=")
		if !ok || key == "" {
			return steadyAgainVariant{}, fmt.Errorf("variant %q: want KEY=VALUE, not %q", name, setting)
		}
		// Two values of one key would leave the report saying both while the process has one.
		if seen[key] {
			return steadyAgainVariant{}, fmt.Errorf("variant %q: %s given twice", name, key)
		}
		seen[key] = true
		if configKey, ok := strings.CutPrefix(key, configPrefix); ok {
			if configKey == "" || val == "" {
				return steadyAgainVariant{}, fmt.Errorf("variant %q: want config.KEY=VALUE, not %q", name, setting)
			}
			if v.Config == nil {
				v.Config = map[string]string{}
			}
			v.Config[configKey] = val
			continue
		}
		if key == "nice" {
			n, err := strconv.Atoi(val)
			if err != nil || n < -20 || n > 19 {
				return steadyAgainVariant{}, fmt.Errorf("variant %q: want nice=N with N from -20 to 19, not %q", name, setting)
			}
			v.Nice = &n
			continue
		}
		if key != "binary" {
			v.Env = append(v.Env, setting)
			continue
		}
		if val == "" {
			return steadyAgainVariant{}, fmt.Errorf("variant %q: binary= names no file", name)
		}
		abs, err := filepath.Abs(val)
		if err != nil {
			return steadyAgainVariant{}, fmt.Errorf("variant %q: binary %s: %w", name, val, err)
		}
		info, err := stat(abs)
		if err != nil {
			return steadyAgainVariant{}, fmt.Errorf("variant %q: binary %s: %w", name, val, err)
		}
		if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			return steadyAgainVariant{}, fmt.Errorf("variant %q: binary %s is not an executable file", name, val)
		}
		v.Binary = abs
	}
	return v, nil
}

// steadyAgainResult is one variant's part of (g).
type steadyAgainResult struct {
	steadyAgainVariant
	// BinaryRevision is the commit the variant's binary was built at, from its build info
	// ("abc123", "-dirty" after it when built from a changed tree), when it has one.
	BinaryRevision string `json:"binaryRevision,omitempty"`
	// RuntimeEnvironment is the Go runtime's variables the variant's operator had: the bench's own
	// (conditions.runtimeEnvironment) with the variant's over them.
	RuntimeEnvironment map[string]string `json:"runtimeEnvironment,omitempty"`
	// AllObservedSeconds is from the variant's start until it had made a Flink call for every
	// application; NotObserved counts those it had not when the wait (-timeout) ended.
	AllObservedSeconds float64 `json:"allObservedSeconds"`
	NotObserved        int     `json:"notObserved,omitempty"`
	// Steady is its window, measured as (c)'s, without (c)'s separate checkpointing and
	// savepointing groups (they go on running, and their passes are in the reconcile figures).
	Steady *steadyResult `json:"steady,omitempty"`
	// Error is why the variant has no figures, when it failed: the next one runs all the same.
	Error string `json:"error,omitempty"`
}

// steadyAgain runs (g): each variant in turn on the applications of every (keys), its window
// measured on the fleet's groups as (c)'s; then the usual operator again, for what follows.
func (b *bench) steadyAgain(ctx context.Context, o options, every []string, fleet group, fleetCheckpointing *group) ([]steadyAgainResult, error) {
	var out []steadyAgainResult
	for i, v := range o.steadyAgain {
		b.logf("(g) variant %d of %d: %s", i+1, len(o.steadyAgain), v)
		r := b.variant(ctx, o, v, every, fleet, fleetCheckpointing)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.Error != "" {
			b.logf("(g) variant %s failed, the next goes on: %s", v.Name, r.Error)
		} else {
			b.logf("(g) variant %s: every app observed %.1f s after the start (%d not); reconcile p50 %.1f ms, p90 %.1f ms, p99 %.1f ms",
				v.Name, r.AllObservedSeconds, r.NotObserved, r.Steady.ReconcileP50Milli, r.Steady.ReconcileP90Milli, r.Steady.ReconcileP99Milli)
		}
		out = append(out, r)
	}
	b.logf("(g) starting the usual operator again")
	b.env.KillOperator()
	if err := b.env.StartOperator(); err != nil {
		return nil, err
	}
	if _, err := b.operatorAddress(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// variant restarts the operator as v says and measures it. A failure is the result's Error, with
// the operator stopped: an older binary that cannot run must not cost the run's other figures.
func (b *bench) variant(ctx context.Context, o options, v steadyAgainVariant, every []string, fleet group, fleetCheckpointing *group) steadyAgainResult {
	r := steadyAgainResult{steadyAgainVariant: v, RuntimeEnvironment: variantRuntime(os.Getenv, v.Env)}
	if v.Binary != "" {
		r.BinaryRevision = binaryRevision(v.Binary)
	}
	fail := func(err error) steadyAgainResult {
		b.env.KillOperator()
		r.Error = err.Error()
		return r
	}
	b.env.KillOperator()
	// Nothing calls Flink now: every later call is the variant's.
	base := b.callsByApp(every)
	if v.Nice != nil {
		b.env.SetOperatorNice(*v.Nice)
	}
	err := b.env.StartOperatorVariant(v.Binary, v.Env, v.Config)
	// The variant's niceness is its process's only: the next operator starts at -operator-nice.
	b.env.SetOperatorNice(o.operatorNice)
	if err != nil {
		return fail(err)
	}
	started := time.Now()
	if _, err := b.operatorAddress(ctx); err != nil {
		return fail(err)
	}
	if r.AllObservedSeconds, r.NotObserved, err = b.reobserved(ctx, every, base, started); err != nil {
		return fail(err)
	}
	if r.NotObserved > 0 {
		b.logf("(g) variant %s had not observed %d of %d apps after %s; measuring it all the same", v.Name, r.NotObserved, len(every), b.timeout)
	}
	// (c)'s log lines follow, for this variant's window; its profiles get the variant's name.
	b.profileTag = v.Name
	defer func() { b.profileTag = "" }()
	if r.Steady, err = b.steady(ctx, fleet, fleetCheckpointing, nil, nil, o.settle, o.steady); err != nil {
		return fail(err)
	}
	return r
}

// operatorAddress waits for the operator just started to serve /metrics, as long as it runs and
// at most -timeout, and makes its address the bench's.
func (b *bench) operatorAddress(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	// MetricsAddress waits for a process that has ended as for one that starts slowly.
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if b.env.OperatorExit() != "" {
					cancel()
					return
				}
			}
		}
	}()
	addr, err := b.env.MetricsAddress(ctx)
	if err != nil {
		if exit := b.env.OperatorExit(); exit != "" {
			return "", fmt.Errorf("the operator ended (%s) before it served /metrics; its log ends: %s",
				exit, strings.Join(lastLines(b.env.OperatorLog(), 5), " | "))
		}
		return "", err
	}
	b.setMetricsAddress(addr)
	return addr, nil
}

// reobserved waits until the operator started at started has made a Flink call for every
// application of keys, beyond their calls at base; at most -timeout. It answers how long that took
// and how many it had not called when the wait ended.
func (b *bench) reobserved(ctx context.Context, keys []string, base map[string]int64, started time.Time) (seconds float64, notObserved int, err error) {
	pending := make(map[string]bool, len(keys))
	for _, k := range keys {
		pending[k] = true
	}
	deadline := started.Add(b.timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		calls := b.callsByApp(keys)
		for k := range pending {
			if calls[k] > base[k] {
				delete(pending, k)
			}
		}
		if len(pending) == 0 || now.After(deadline) {
			return now.Sub(started).Seconds(), len(pending), nil
		}
		if exit := b.env.OperatorExit(); exit != "" {
			return 0, 0, fmt.Errorf("the operator ended (%s) with %d apps not observed", exit, len(pending))
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-tick.C:
		}
	}
}

// variantRuntime is the Go runtime's variables a variant's operator has: the bench's, with the
// variant's KEY=VALUE over them.
func variantRuntime(getenv func(string) string, env []string) map[string]string {
	return runtimeEnvironment(func(name string) string {
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				return v
			}
		}
		return getenv(name)
	})
}

// binaryRevision is the commit a Go binary was built at, "" when it does not say.
func binaryRevision(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" && modified == "true" {
		revision += "-dirty"
	}
	return revision
}

// printSteadyAgain is (g)'s table: (c) first, then each variant, their figures side by side.
func printSteadyAgain(w io.Writer, c *steadyResult, variants []steadyAgainResult) {
	fmt.Fprintln(w, "\n(g) the steady state again, the operator restarted as each -steady-again variant in turn:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tsettings\tall observed\treconcile p50 / p90 / p99\tFlink call p99\toperator CPU\tRSS")
	row := func(name, settings, observed string, st *steadyResult) {
		cpu := fmt.Sprintf("%.2f cores", st.Processes.cpuPerHour("operator")/3600)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f / %.1f / %.1f ms\t%.1f ms\t%s\t%s\n", name, settings, observed,
			st.ReconcileP50Milli, st.ReconcileP90Milli, st.ReconcileP99Milli, st.FlinkCallP99Milli, cpu, mem(st.Memory))
	}
	if c != nil {
		row("(c)", "as the run", "—", c)
	}
	for _, v := range variants {
		settings := v.settings()
		if settings == "" {
			settings = "the usual operator"
		}
		if v.BinaryRevision != "" {
			settings += " (" + v.BinaryRevision + ")"
		}
		if v.Steady == nil {
			fmt.Fprintf(tw, "%s\t%s\tFAILED: %s\t\t\t\t\n", v.Name, settings, v.Error)
			continue
		}
		observed := secs(v.AllObservedSeconds)
		if v.NotObserved > 0 {
			observed = fmt.Sprintf("%d not, after %s", v.NotObserved, observed)
		}
		row(v.Name, settings, observed, v.Steady)
	}
	_ = tw.Flush()
}
