package v1beta1

import (
	"fmt"
	"sort"
	"strconv"
)

// FlinkConfig is free-form Flink configuration. Lyft's manifests write numbers and booleans unquoted,
// so values are kept as JSON scalars rather than strings.
type FlinkConfig map[string]interface{}

// DeepCopyInto is written by hand because deepcopy-gen cannot copy interface values.
func (in *FlinkConfig) DeepCopyInto(out *FlinkConfig) {
	if *in == nil {
		*out = nil
		return
	}
	*out = make(FlinkConfig, len(*in))
	for k, v := range *in {
		(*out)[k] = deepCopyJSONValue(v)
	}
}

// DeepCopy copies the configuration.
func (in *FlinkConfig) DeepCopy() *FlinkConfig {
	if in == nil {
		return nil
	}
	out := new(FlinkConfig)
	in.DeepCopyInto(out)
	return out
}

func deepCopyJSONValue(x interface{}) interface{} {
	switch x := x.(type) {
	case map[string]interface{}:
		c := make(map[string]interface{}, len(x))
		for k, v := range x {
			c[k] = deepCopyJSONValue(v)
		}
		return c
	case []interface{}:
		c := make([]interface{}, len(x))
		for i, v := range x {
			c[i] = deepCopyJSONValue(v)
		}
		return c
	default:
		return x
	}
}

// Strings renders every value as Flink reads it and rejects values that are not scalars, naming the key.
func (in FlinkConfig) Strings() (map[string]string, error) {
	out := make(map[string]string, len(in))
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := flinkString(k, in[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// Lookup is one key's value as Strings renders it and whether it is set, with Strings' error when
// any value is not a scalar: a reader of one key treats a configuration Flink cannot read as
// Strings' callers do. It builds no map, and allocates only to render a value that is not a
// string: the operator reads a few keys of every application on every pass.
func (in FlinkConfig) Lookup(key string) (value string, set bool, err error) {
	for _, v := range in {
		switch v.(type) {
		case string, bool, float64, float32, int, int32, int64:
		default:
			_, err := in.Strings() // names the first offending key in order, as Strings does
			return "", false, err
		}
	}
	v, set := in[key]
	if !set {
		return "", false, nil
	}
	value, _ = flinkString(key, v)
	return value, true, nil
}

// flinkString is a value as Flink reads it: a string as it is, a number or boolean as written.
func flinkString(key string, value interface{}) (string, error) {
	switch v := value.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32), nil
	case int:
		return strconv.Itoa(v), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case nil:
		return "", fmt.Errorf("flinkConfig %q has no value", key)
	default:
		return "", fmt.Errorf("flinkConfig %q must be a string, number or boolean, not %T", key, v)
	}
}
