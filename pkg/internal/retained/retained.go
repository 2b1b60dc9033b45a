// Package retained measures what a value keeps alive, for the tests that hold the operator's
// memories of a tenant's object to their bounds.
package retained

import "reflect"

// Bytes is about how much memory v holds: every string, slice and map it reaches, each
// counted once.
func Bytes(v any) int {
	seen := map[uintptr]bool{}
	var walk func(reflect.Value) int
	walk = func(v reflect.Value) int {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			return int(v.Type().Elem().Size()) + walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return 0
			}
			return walk(v.Elem())
		case reflect.String:
			return v.Len()
		case reflect.Struct:
			n := 0
			for i := range v.NumField() {
				n += walk(v.Field(i))
			}
			return n
		case reflect.Slice:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			n := v.Cap() * int(v.Type().Elem().Size())
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Array:
			n := 0
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Map:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			n := v.Len() * int(v.Type().Key().Size()+v.Type().Elem().Size())
			for it := v.MapRange(); it.Next(); {
				n += walk(it.Key()) + walk(it.Value())
			}
			return n
		}
		return 0
	}
	return walk(reflect.ValueOf(v))
}
