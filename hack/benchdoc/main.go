// Command benchdoc renders a benchmark's JSON results as the Markdown table docs/performance.md
// shows, and writes it into that document between the markers of its block, so that the figures
// there are what a run printed, not copied by hand:
//
//	go run ./hack/benchdoc -json bench-results.json -doc docs/performance.md
//
// It reads what `make bench` and `make bench-soak` write (integ/cmd/bench: the run's conditions and
// its figures against their targets) and what `make bench-autoscaler` writes (one entry a scenario
// and variant). A block is the lines between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->`;
// NAME is n<N> for `make bench N=<N>`, soak for `make bench-soak`, autoscaler for
// `make bench-autoscaler`, or what -block says. Without -doc the table goes to standard output.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

func main() {
	in := flag.String("json", "", "the benchmark's JSON results (make bench's BENCH_OUT, SOAK_OUT or AS_BENCH_OUT)")
	doc := flag.String("doc", "", "the Markdown document whose block to replace (default: print the block)")
	block := flag.String("block", "", "the block's name (default: n<N>, soak or autoscaler, from the results)")
	date := flag.String("date", "", "the run's date, YYYY-MM-DD, for results that do not record it (the autoscaler's; default: the file's modification time)")
	flag.Parse()
	if err := run(*in, *doc, *block, *date); err != nil {
		fmt.Fprintln(os.Stderr, "benchdoc:", err)
		os.Exit(1)
	}
}

func run(in, doc, block, date string) error {
	if in == "" {
		return errors.New("-json is required")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if date == "" {
		info, err := os.Stat(in)
		if err != nil {
			return err
		}
		date = info.ModTime().UTC().Format(time.DateOnly)
	}
	name, table, err := render(data, date)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if block != "" {
		name = block
	}
	if doc == "" {
		fmt.Print(table)
		return nil
	}
	text, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	out, err := replaceBlock(string(text), name, table)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: block %s written from %s\n", doc, name, in)
	return nil
}

// render is the block's name and its Markdown for one results file.
func render(data []byte, date string) (name, table string, err error) {
	var probe struct {
		Conditions *json.RawMessage `json:"conditions"`
		Runs       *json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return "", "", err
	}
	switch {
	case probe.Conditions != nil:
		var r benchResults
		if err := json.Unmarshal(data, &r); err != nil {
			return "", "", err
		}
		return r.blockName(), r.markdown(), nil
	case probe.Runs != nil:
		var r autoscalerResults
		if err := json.Unmarshal(data, &r); err != nil {
			return "", "", err
		}
		return "autoscaler", r.markdown(date), nil
	}
	return "", "", errors.New("neither make bench's results (conditions, figures) nor make bench-autoscaler's (runs)")
}

// replaceBlock puts table between the markers of block name, which must be in text once.
func replaceBlock(text, name, table string) (string, error) {
	begin, end := "<!-- figures:"+name+" -->", "<!-- /figures:"+name+" -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i || strings.Count(text, begin) != 1 || strings.Count(text, end) != 1 {
		return "", fmt.Errorf("no block %q (a line %s, the table, a line %s); blocks here: %s",
			name, begin, end, strings.Join(blockNames(text), ", "))
	}
	return text[:i+len(begin)] + "\n" + table + text[j:], nil
}

var blockMarker = regexp.MustCompile(`<!-- figures:([A-Za-z0-9_.-]+) -->`)

func blockNames(text string) []string {
	var names []string
	for _, m := range blockMarker.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	if names == nil {
		return []string{"none"}
	}
	return names
}

// cell makes a value safe inside a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
