package v1beta1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// UnmarshalJSON reads a Flink configuration as Flink reads its YAML configuration: a nested object
// is flattened into dotted keys (high-availability: {type: kubernetes} is high-availability.type),
// a list is its items joined with ";", and a scalar stays as written, whole numbers as integers, as the
// API machinery decodes them. Every reader then sees flat keys, written either way. A key written
// both ways is refused, naming it.
func (in *FlinkConfig) UnmarshalJSON(b []byte) error {
	var raw map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if raw == nil {
		*in = nil
		return nil
	}
	out := make(FlinkConfig, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if err := flattenInto(out, k, raw[k]); err != nil {
			return err
		}
	}
	*in = out
	return nil
}

func flattenInto(out FlinkConfig, key string, v interface{}) error {
	switch v := v.(type) {
	case json.Number:
		return put(out, key, number(v))
	case map[string]interface{}:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := flattenInto(out, key+"."+k, v[k]); err != nil {
				return err
			}
		}
		return nil
	case []interface{}:
		items := make([]string, len(v))
		for i, x := range v {
			if n, isNumber := x.(json.Number); isNumber {
				x = number(n)
			}
			s, err := flinkString(fmt.Sprintf("%s[%d]", key, i), x)
			if err != nil {
				return err
			}
			items[i] = s
		}
		v2 := strings.Join(items, ";")
		return put(out, key, v2)
	}
	return put(out, key, v)
}

// number is a JSON number as the API machinery decodes one (sigs.k8s.io/json's preserved
// integers): a whole number that fits an int64 as an int64, any other as a float64. "-0" stays the
// float it encodes, so that a configuration reads the same after it is encoded again.
func number(n json.Number) interface{} {
	if s := n.String(); !strings.ContainsAny(s, ".eE") && s != "-0" {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	f, _ := n.Float64()
	return f
}

func put(out FlinkConfig, key string, v interface{}) error {
	if _, twice := out[key]; twice {
		return fmt.Errorf("flinkConfig %q is set twice: as a key and within a nested object", key)
	}
	out[key] = v
	return nil
}
