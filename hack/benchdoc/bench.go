package main

import (
	"fmt"
	"sort"
	"strings"
)

// benchResults is the part of integ/cmd/bench's results the table shows: the figures are already
// named, valued and judged by the bench, so a new figure there appears here with no change.
type benchResults struct {
	Conditions struct {
		Command            string            `json:"command"`
		Date               string            `json:"date"`
		Commit             string            `json:"commit"`
		CPUs               int               `json:"cpus"`
		LoadAverageStart   string            `json:"loadAverageAtStart"`
		Kubernetes         string            `json:"kubernetes"`
		N                  int               `json:"n"`
		Workers            int               `json:"workers"`
		RuntimeEnvironment map[string]string `json:"runtimeEnvironment"`
	} `json:"conditions"`
	Single  *struct{} `json:"single"`
	Soak    *struct{} `json:"soak"`
	Figures []struct {
		Name   string `json:"name"`
		Value  string `json:"value"`
		Target string `json:"target"`
		OK     *bool  `json:"ok"`
	} `json:"figures"`
	TargetsMet bool `json:"targetsMet"`
}

func (r *benchResults) blockName() string {
	if r.Single == nil && r.Soak != nil {
		return "soak"
	}
	return fmt.Sprintf("n%d", r.Conditions.N)
}

func (r *benchResults) markdown() string {
	c := r.Conditions
	var b strings.Builder
	date, _, _ := strings.Cut(c.Date, "T")
	fmt.Fprintf(&b, "`%s` at %s, %s: %d CPUs, load %s at the start, Kubernetes %s", c.Command, c.Commit, date, c.CPUs,
		c.LoadAverageStart, c.Kubernetes)
	if c.Workers > 0 && r.Single != nil {
		fmt.Fprintf(&b, ", %d workers", c.Workers)
	}
	if len(c.RuntimeEnvironment) > 0 {
		keys := make([]string, 0, len(c.RuntimeEnvironment))
		for k := range c.RuntimeEnvironment {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, ", %s=%s", k, c.RuntimeEnvironment[k])
		}
	}
	if r.TargetsMet {
		b.WriteString(". Every target met.\n\n")
	} else {
		b.WriteString(". **Not every target met.**\n\n")
	}
	b.WriteString("| figure | value | target | |\n|---|---|---|---|\n")
	for _, f := range r.Figures {
		judged := ""
		if f.OK != nil {
			judged = map[bool]string{true: "✓", false: "**missed**"}[*f.OK]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(strings.TrimSpace(f.Name)), cell(f.Value), cell(f.Target), judged)
	}
	return b.String()
}
