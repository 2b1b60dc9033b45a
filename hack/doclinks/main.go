// Command doclinks fails when a relative link in the repository's Markdown does not resolve: a
// file or directory that does not exist, or a #fragment that names no heading of its target. With
// -index FILE it also fails when a Markdown file in FILE's directory tree is not linked from FILE,
// so that the documentation's index lists every document. `make verify` runs it over README.md and
// docs/, so that moving or renaming a document or a heading breaks the build rather than a reader's
// click.
//
//	go run ./hack/doclinks -index docs/README.md README.md docs
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

func main() {
	index := flag.String("index", "", "a Markdown file that must link to every other Markdown file of its directory tree")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: doclinks [-index FILE] FILE_OR_DIR...")
		os.Exit(2)
	}
	files, err := markdownFiles(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	broken, err := check(files)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *index != "" {
		missing, err := unindexed(*index)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		broken = append(broken, missing...)
	}
	for _, b := range broken {
		fmt.Println(b)
	}
	if len(broken) > 0 {
		fmt.Printf("%d broken relative links or unlisted documents\n", len(broken))
		os.Exit(1)
	}
}

// markdownFiles is every .md file named or under a directory named.
func markdownFiles(roots []string) ([]string, error) {
	var files []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// check returns one line per broken link: file:line: the link and why.
func check(files []string) ([]string, error) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(data))
		anchors[path] = a
		return a, nil
	}
	var broken []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(data)) {
			if why := resolve(file, l.target, anchorsOf); why != "" {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", file, l.line, l.target, why))
			}
		}
	}
	return broken, nil
}

// unindexed is a line for each Markdown file of index's directory tree that index does not link to.
func unindexed(index string) ([]string, error) {
	data, err := os.ReadFile(index)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(index)
	linked := map[string]bool{}
	for _, l := range links(string(data)) {
		path, _, _ := strings.Cut(l.target, "#")
		if path != "" && !hasScheme(path) {
			linked[filepath.Join(dir, path)] = true
		}
	}
	files, err := markdownFiles([]string{dir})
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, f := range files {
		if f != filepath.Clean(index) && !linked[f] {
			missing = append(missing, fmt.Sprintf("%s: not listed in %s", f, index))
		}
	}
	return missing, nil
}

// resolve says why a link from file does not resolve, or "" when it does. Links with a scheme
// (https:, mailto:) are not this check's business.
func resolve(file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if hasScheme(target) {
		return ""
	}
	path, fragment, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "absolute path: links must be relative"
		}
		dest = filepath.Join(filepath.Dir(file), path)
		info, err := os.Stat(dest)
		if err != nil {
			return "no such file or directory"
		}
		if info.IsDir() {
			if fragment != "" {
				return "a fragment on a directory"
			}
			return ""
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if !a[fragment] {
		return "no heading #" + fragment + " in " + dest
	}
	return ""
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

func hasScheme(target string) bool { return scheme.MatchString(target) }

type link struct {
	line   int
	target string
}

// inlineLink is [text](target) or [text](target "title"); the text may hold code but no ].
var inlineLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// codeSpan is inline code, whose brackets are not links.
var codeSpan = regexp.MustCompile("`[^`]*`")

// links are the inline links of a Markdown text outside fenced code blocks and code spans.
func links(text string) []link {
	var out []link
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{line: i + 1, target: m[1]})
		}
	}
	return out
}

// headingAnchors are the fragments GitHub gives a Markdown text's headings.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if title == "" || title[0] != ' ' {
			continue
		}
		slug := slugify(strings.TrimSpace(title))
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// slugify is GitHub's heading anchor: lower case, spaces to hyphens, and every character but
// letters, digits, hyphens and underscores dropped. Link text keeps only its text.
func slugify(title string) string {
	title = inlineLink.ReplaceAllStringFunc(title, func(s string) string {
		return s[1:strings.Index(s, "](")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
