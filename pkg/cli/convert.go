package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
)

func newConvertCommand() *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "convert -f FILE|DIR",
		Short: "Convert the Apache Flink operator's objects (flink.apache.org) to flinkfsm's, naming every field not carried across",
		Long: "Read YAML manifests (files, directories of .yaml/.yml files, or - for standard input) and write them to\n" +
			"standard output with each session-mode FlinkDeployment, FlinkSessionJob and FlinkStateSnapshot of the Apache\n" +
			"Flink Kubernetes operator converted to flinkfsm's kind, ready for kubectl apply; other objects pass through.\n" +
			"Every Apache field is carried across or named on standard error with the reason it is not. Nothing is sent\n" +
			"to a cluster.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("name the manifests with -f FILE|DIR (- for standard input)")
			}
			in, err := readManifests(files, cmd.InOrStdin())
			if err != nil {
				return err
			}
			out, report, err := convert.Convert(in)
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return err
			}
			for _, w := range report.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "converted %d object(s), passed %d through, %d warning(s)\n",
				report.Converted, report.Passed, len(report.Warnings))
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a manifest file, a directory of them, or - for standard input")
	return cmd
}

// readManifests joins the documents of every file named, directories walked for .yaml and .yml files
// in name order.
func readManifests(names []string, stdin io.Reader) ([]byte, error) {
	var docs []string
	add := func(b []byte) { docs = append(docs, strings.TrimRight(string(b), "\n")) }
	for _, name := range names {
		if name == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, err
			}
			add(b)
			continue
		}
		var paths []string
		err := filepath.WalkDir(name, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (path == name || slices.Contains([]string{".yaml", ".yml"}, filepath.Ext(path))) {
				paths = append(paths, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(paths)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			add(b)
		}
	}
	return []byte(strings.Join(docs, "\n---\n") + "\n"), nil
}
