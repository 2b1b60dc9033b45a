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
		switch v := in[k].(type) {
		case string:
			out[k] = v
		case bool:
			out[k] = strconv.FormatBool(v)
		case float64:
			out[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case float32:
			out[k] = strconv.FormatFloat(float64(v), 'f', -1, 32)
		case int:
			out[k] = strconv.Itoa(v)
		case int32:
			out[k] = strconv.FormatInt(int64(v), 10)
		case int64:
			out[k] = strconv.FormatInt(v, 10)
		case nil:
			return nil, fmt.Errorf("flinkConfig %q has no value", k)
		default:
			return nil, fmt.Errorf("flinkConfig %q must be a string, number or boolean, not %T", k, v)
		}
	}
	return out, nil
}
