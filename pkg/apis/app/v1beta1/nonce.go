package v1beta1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Nonce is a value whose change asks the operator for an action (a restart, a savepoint, a
// redeploy). The Lyft operator's manifests write nonces as strings, the Apache operator's as
// integers: both are read, an integer as its decimal text, so `1` and `"1"` are the same nonce and
// changing one into the other asks for nothing. The operator writes nonces back as strings.
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:MaxLength=253
type Nonce string

// UnmarshalJSON reads a string or a whole number; any other JSON value is refused, naming it.
func (n *Nonce) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*n = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = Nonce(s)
		return nil
	}
	// A whole number is the nonce its decimal text names: 2.0 is "2"; 1.5 and 1e3 name none (an
	// exponent could ask for a number of any size).
	text := string(b)
	whole, fraction, _ := strings.Cut(text, ".")
	digits := strings.TrimPrefix(whole, "-")
	if len(text) > 64 || digits == "" || strings.Trim(digits, "0123456789") != "" ||
		strings.Trim(fraction, "0") != "" || (len(digits) > 1 && digits[0] == '0') {
		return fmt.Errorf("a nonce is a string or a whole number, not %.40s", b)
	}
	*n = Nonce(whole)
	return nil
}
