package v1beta1

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestANonceIsReadFromAStringOrAWholeNumber(t *testing.T) {
	for in, want := range map[string]Nonce{
		`{"restartNonce":"abc"}`:                      "abc",
		`{"restartNonce":1}`:                          "1",
		`{"restartNonce":"1"}`:                        "1",
		`{"restartNonce":-7}`:                         "-7",
		`{"restartNonce":2.0}`:                        "2",
		`{"restartNonce":9223372036854775807}`:        "9223372036854775807",
		`{"restartNonce":null}`:                       "",
		`{}`:                                          "",
		`{"savepointRedeployNonce":12,"jarName":"a"}`: "",
	} {
		var spec FlinkApplicationSpec
		require.NoError(t, json.Unmarshal([]byte(in), &spec), in)
		assert.Equal(t, want, spec.RestartNonce, in)
	}
	var spec FlinkApplicationSpec
	require.NoError(t, json.Unmarshal([]byte(`{"savepointRedeployNonce":12}`), &spec))
	assert.Equal(t, Nonce("12"), spec.SavepointRedeployNonce)
	out, err := json.Marshal(spec)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"savepointRedeployNonce":"12"`, "the operator writes nonces back as strings")
}

func TestANonceRefusesWhatNamesNoWholeNumber(t *testing.T) {
	for _, in := range []string{`1.5`, `1e3`, `1e999999999`, `true`, `{}`, `[1]`, `01`, `-`, `.5`} {
		var n Nonce
		assert.Error(t, json.Unmarshal([]byte(in), &n), in)
	}
}
