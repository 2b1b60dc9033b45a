package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Apache operator's own examples and e2e manifests (testdata/apache/SOURCES.md): each object
// converts or is refused with its reason, and every field left out is named.
func TestTheApacheOperatorsManifestsConvertOrSayWhyNot(t *testing.T) {
	files, err := filepath.Glob("testdata/apache/*.y*ml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	converted, refused, warned := 0, 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		_, report, err := Convert(b)
		switch {
		case err != nil:
			t.Errorf("%s: refused: %v", f, err)
			refused++
		default:
			converted++
			warned += len(report.Warnings)
			for _, w := range report.Warnings {
				assert.NotEmpty(t, w.Reason)
				assert.False(t, strings.HasPrefix(w.Field, "status"), "%s: %s", f, w)
			}
		}
	}
	t.Logf("%d files: %d converted (%d warnings), %d refused", len(files), converted, warned, refused)
}
