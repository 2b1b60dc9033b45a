package convert

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// fields walks one object of a manifest and hands out its fields one at a time: what a converter
// takes is carried across, and every field it leaves is named in a warning (unmapped), so that
// nothing of the manifest is dropped without a word.
type fields struct {
	// path is where the object sits in its document, "spec.job" say; "" for the document itself.
	path string
	m    map[string]any
	out  *Report
}

// at is the path of one of the object's fields.
func (f *fields) at(key string) string {
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

// take removes a field and returns its value.
func (f *fields) take(key string) (any, bool) {
	if f == nil || f.m == nil {
		return nil, false
	}
	v, ok := f.m[key]
	delete(f.m, key)
	return v, ok && v != nil
}

// object takes a field that holds an object; nil when it is absent, with a warning when it is not
// an object.
func (f *fields) object(key string) *fields {
	v, ok := f.take(key)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		f.out.warn(f.at(key), "not an object; left out")
		return nil
	}
	return &fields{path: f.at(key), m: m, out: f.out}
}

// text takes a field as text: a string, or a number or boolean written as one.
func (f *fields) text(key string) (string, bool) {
	v, ok := f.take(key)
	if !ok {
		return "", false
	}
	s, ok := scalarText(v)
	if !ok {
		f.out.warn(f.at(key), "not a string, number or boolean; left out")
	}
	return s, ok
}

// nonce takes a nonce: Apache's are whole numbers, written as the text flinkfsm reads them as.
func (f *fields) nonce(key string) v1beta1.Nonce {
	s, _ := f.text(key)
	return v1beta1.Nonce(s)
}

// integer takes a field that holds a whole number.
func (f *fields) integer(key string) (int64, bool) {
	s, ok := f.text(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f.out.warn(f.at(key), fmt.Sprintf("%q is not a whole number; left out", s))
		return 0, false
	}
	return n, true
}

// boolean takes a field that holds true or false.
func (f *fields) boolean(key string) (bool, bool) {
	s, ok := f.text(key)
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		f.out.warn(f.at(key), fmt.Sprintf("%q is not true or false; left out", s))
		return false, false
	}
	return b, true
}

// drop takes a field that is not carried across, and says why.
func (f *fields) drop(key, why string) {
	if _, ok := f.take(key); ok {
		f.out.warn(f.at(key), why)
	}
}

// rest names every field no converter took.
func (f *fields) rest() {
	if f == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(f.m)) {
		if f.m[k] != nil {
			f.out.warn(f.at(k), "no flinkfsm field takes it; left out")
		}
	}
}

// scalarText is a scalar as Flink's configuration and Kubernetes' text fields read it.
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v == float64(int64(v)) {
			return strconv.FormatInt(int64(v), 10), true
		}
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	}
	return "", false
}
