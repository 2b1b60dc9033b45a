package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSlugsAreGitHubs(t *testing.T) {
	for title, want := range map[string]string{
		"Flink versions":                                "flink-versions",
		"What a tenant may cost: the bounds":            "what-a-tenant-may-cost-the-bounds",
		"Upgrade modes (`spec.upgradeMode`)":            "upgrade-modes-specupgrademode",
		"10,000 applications":                           "10000-applications",
		"Against a kind cluster: `make integ-external`": "against-a-kind-cluster-make-integ-external",
		"See [the table](x.md) first":                   "see-the-table-first",
	} {
		if got := slugify(title); got != want {
			t.Errorf("slugify(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestABrokenLinkIsReportedAndAGoodOneIsNot(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("docs/a.md", "# A\n\n## Two words\n\n## Two words\n")
	readme := write("README.md", strings.Join([]string{
		"# Top",
		"[good](docs/a.md) [anchor](docs/a.md#two-words) [second](docs/a.md#two-words-1) [self](#top)",
		"[dir](docs) [web](https://example.com/x.md) [mail](mailto:a@b.c)",
		"`[in code](nowhere.md)`",
		"```",
		"[fenced](nowhere.md)",
		"```",
		"[missing](docs/b.md)",
		"[no heading](docs/a.md#three-words)",
		"[absolute](/docs/a.md)",
	}, "\n"))
	broken, err := check([]string{readme})
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) != 3 {
		t.Fatalf("want the missing file, the missing heading and the absolute path, got %q", broken)
	}
	for i, want := range []string{"README.md:8: docs/b.md", "README.md:9: docs/a.md#three-words", "README.md:10: /docs/a.md"} {
		if !strings.Contains(broken[i], want) {
			t.Errorf("broken[%d] = %q, want it to name %q", i, broken[i], want)
		}
	}
}

func TestADocumentTheIndexDoesNotListIsReported(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"README.md":           "[a](a.md) [b](sub/b.md#x) [web](https://example.com/c.md)",
		"a.md":                "# A",
		"sub/b.md":            "# X",
		"sub/c.md":            "# C",
		"../outside-index.md": "# not in the tree",
	} {
		path := filepath.Join(dir, "docs", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing, err := unindexed(filepath.Join(dir, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 1 || !strings.Contains(missing[0], filepath.Join("sub", "c.md")) {
		t.Errorf("want only sub/c.md reported, got %q", missing)
	}
}
