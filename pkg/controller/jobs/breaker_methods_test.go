package jobs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// The breaker embeds the client, so a method added to client.API would reach Flink through the
// embedding, past the breaker and the lease fence, without a word. Every method must be the
// breaker's own.
func TestTheBreakerWrapsEveryFlinkCall(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "breaker.go", nil, 0)
	require.NoError(t, err)
	own := map[string]bool{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
			own[fn.Name.Name] = true
		}
	}
	api := reflect.TypeOf((*client.API)(nil)).Elem()
	for i := 0; i < api.NumMethod(); i++ {
		assert.True(t, own[api.Method(i).Name], "breaker.go does not wrap %s", api.Method(i).Name)
	}
}
