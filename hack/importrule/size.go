package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Each of the operator's packages holds one concern a reader takes in whole: at most maxFiles
// hand-written files besides its tests, and maxLines lines in them. Generated code (the client,
// zz_generated files) is not counted.
const (
	maxFiles = 30
	maxLines = 4000
)

// packageFiles is one package as go list describes it: its import path, folder and Go files.
type packageFiles struct {
	path, dir string
	files     []string
}

// oversized names the packages that hold more than a reader takes in whole; lines counts the lines
// of a file.
func oversized(pkgs []packageFiles, lines func(path string) (int, error)) ([]string, error) {
	var out []string
	for _, p := range pkgs {
		if strings.HasPrefix(p.path, "pkg/client/") {
			continue
		}
		files, total := 0, 0
		for _, f := range p.files {
			if strings.HasPrefix(f, "zz_generated") {
				continue
			}
			n, err := lines(filepath.Join(p.dir, f))
			if err != nil {
				return nil, err
			}
			files, total = files+1, total+n
		}
		if files > maxFiles || total > maxLines {
			out = append(out, fmt.Sprintf("%s holds %d files and %d lines besides its tests: at most %d and %d; split it by concern",
				p.path, files, total, maxFiles, maxLines))
		}
	}
	return out, nil
}

// lineCount counts the lines of a file.
func lineCount(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return bytes.Count(b, []byte("\n")), nil
}
