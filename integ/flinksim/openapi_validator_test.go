package flinksim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// specPaths are where Flink 1.20's generated OpenAPI document is looked for when no versioned copy
// is found (openAPIDirs): the shared folder beside the repository (as CI checks it out), then the
// development machine's. FLINK_OPENAPI_SPEC overrides both.
var specPaths = []string{"../../../shared/flink/rest_v1_dispatcher.yml", "/work/shared/flink/rest_v1_dispatcher.yml"}

// openAPIDirs hold each release's document as <major.minor>.yml (docs/static/generated/
// rest_v1_dispatcher.yml at its release): FLINK_OPENAPI_DIR, testdata, then shared/flink/openapi
// beside the repository and on the development machine.
func openAPIDirs() []string {
	dirs := []string{"testdata/openapi", "../../../shared/flink/openapi", "/work/shared/flink/openapi"}
	if d := os.Getenv("FLINK_OPENAPI_DIR"); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	return dirs
}

// openAPI is the parsed spec with its component schemas.
type openAPI struct {
	paths   map[string]any
	schemas map[string]any
}

// loadOpenAPI loads Flink 1.20's document.
func loadOpenAPI(t *testing.T) *openAPI { return loadRelease(t, "1.20") }

// loadRelease loads a release's document. Without it the test is skipped, except 1.20's in CI.
func loadRelease(t *testing.T, version string) *openAPI {
	t.Helper()
	var paths []string
	for _, d := range openAPIDirs() {
		paths = append(paths, filepath.Join(d, version+".yml"))
	}
	if version == "1.20" {
		paths = append(paths, specPaths...)
		if p := os.Getenv("FLINK_OPENAPI_SPEC"); p != "" {
			paths = []string{p}
		}
	}
	var data []byte
	var path string
	err := os.ErrNotExist
	for _, path = range paths {
		if data, err = os.ReadFile(path); err == nil {
			break
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" && version == "1.20" {
			// The one document ../shared holds today; CI must check the simulator against it.
			t.Fatalf("Flink %s OpenAPI spec not found in %v: CI must check the simulator against it", version, paths)
		}
		// The other releases' documents are published data this repository does not carry: they
		// are read from shared/flink/openapi (or FLINK_OPENAPI_DIR) where they are provided.
		t.Skipf("Flink %s OpenAPI spec not available (%v); put it in shared/flink/openapi or set FLINK_OPENAPI_DIR", version, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	spec := &openAPI{
		paths:   doc["paths"].(map[string]any),
		schemas: doc["components"].(map[string]any)["schemas"].(map[string]any),
	}
	spec.correctKnownMistakes()
	return spec
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func obj(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}

// correctKnownMistakes replaces schemas the generator gets wrong, each one
// documented in REST.md, with what Flink actually writes on the wire.
func (s *openAPI) correctKnownMistakes() {
	str := map[string]any{"type": "string"}
	hex := map[string]any{"type": "string", "pattern": "[0-9a-f]{32}"}
	// §5.7: a custom serializer writes jid/name/execution-config.
	s.schemas["JobConfigInfo"] = obj(map[string]any{"jid": ref("JobID"), "name": str, "execution-config": ref("ExecutionConfigInfo")})
	// §5.5: slotSharingGroupId is a hex string, not the Java object's fields.
	vertex := s.schemas["JobDetailsVertexInfo"].(map[string]any)["properties"].(map[string]any)
	if _, since120 := vertex["slotSharingGroupId"]; since120 {
		vertex["slotSharingGroupId"] = hex
	}
	// §5.19: TaskManager ids are pod names (native Kubernetes), not hex.
	s.schemas["ResourceID"] = str
	// §5.10: the checkpoint mode is lower case.
	s.schemas["ProcessingMode"] = map[string]any{"type": "string", "enum": []any{"at_least_once", "exactly_once"}}
	// §5.23: JobResultSerializer uses kebab-case names. 2.3's adds the job's name, application and
	// times, and keeps application-status, whose schema its document no longer has.
	result := map[string]any{
		"id": ref("JobID"), "application-status": map[string]any{"type": "string", "enum": []any{"SUCCEEDED", "FAILED", "CANCELED", "UNKNOWN"}},
		"accumulator-results": map[string]any{"type": "object"}, "net-runtime": map[string]any{"type": "integer"},
		"failure-cause": ref("SerializedThrowable"),
	}
	if _, since23 := s.schemas["ApplicationID"]; since23 {
		integer := map[string]any{"type": "integer"}
		result["name"], result["application-id"], result["start-time"], result["end-time"] = str, hex, integer, integer
		// 2.3: ApplicationIDSerializer and SlotSharingGroupIDSerializer write hex strings, not the
		// Java objects' fields the generator describes.
		s.schemas["ApplicationID"] = hex
		s.schemas["SlotSharingGroupId"] = hex
	}
	s.schemas["JobResult"] = obj(result)
	// §4: SerializedThrowableSerializer writes the class and stack trace beside the serialized form.
	s.schemas["SerializedThrowable"] = obj(map[string]any{"class": str, "stack-trace": str, "serialized-throwable": str})
	// §5.23: job metrics are a bare array.
	s.schemas["MetricList"] = map[string]any{"type": "array", "items": ref("Metric")}
	// AggregatedMetricsResponseBody is a list (an ArrayList in 2.x, a custom serializer before) of
	// AggregatedMetric, whose aggregations are NON_NULL doubles: the document has an empty object.
	num := map[string]any{"type": "number"}
	s.schemas["AggregatedMetricsResponseBody"] = map[string]any{"type": "array", "items": ref("AggregatedMetric")}
	s.schemas["AggregatedMetric"] = map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
		"id": str, "min": num, "max": num, "avg": num, "sum": num, "skew": num,
	}}
}

// responseSchema returns the declared schema of a response; nil when the
// response has no body schema. ok is false when the status is not declared.
func (s *openAPI) responseSchema(path, method string, status int) (schema map[string]any, ok bool) {
	if path == "/jobs/{jobid}/metrics" {
		return ref("MetricList"), true
	}
	p, _ := s.paths[path].(map[string]any)
	op, _ := p[strings.ToLower(method)].(map[string]any)
	responses, _ := op["responses"].(map[string]any)
	resp, found := responses[fmt.Sprint(status)].(map[string]any)
	if !found {
		return nil, false
	}
	content, _ := resp["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	schema, _ = js["schema"].(map[string]any)
	return schema, true
}

// validator checks a JSON document against a schema: required properties,
// JSON types, enums and patterns. In strict mode every declared property must
// be present (Flink writes nulls rather than omitting fields) unless listed in
// optional as "<Schema>.<property>". In closed mode an object may carry no
// property its schema does not declare: a release's answers have none, and a
// release refuses (before 1.20) or drops (from 1.20) one in a request.
type validator struct {
	spec        *openAPI
	strict      bool
	closed      bool
	optional    map[string]bool
	dispatching map[string]bool
	errs        []string
}

func (v *validator) fail(where, format string, args ...any) {
	v.errs = append(v.errs, where+": "+fmt.Sprintf(format, args...))
}

// decodeJSON keeps numbers as json.Number so integers and doubles stay distinct.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	err := dec.Decode(&out)
	return out, err
}

func (v *validator) validate(s map[string]any, ctx string, val any, where string) {
	if r, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		target, _ := v.spec.schemas[name].(map[string]any)
		if target == nil {
			v.fail(where, "unresolved $ref %s", r)
			return
		}
		v.validate(target, name, val, where)
		return
	}
	if val == nil {
		return // Flink writes null for absent values; presence is the parent's concern
	}
	if disc, ok := s["discriminator"].(map[string]any); ok && !v.dispatching[ctx] {
		prop, _ := disc["propertyName"].(string)
		tag, _ := asObject(val)[prop].(string)
		target, found := disc["mapping"].(map[string]any)[tag].(string)
		if !found {
			v.fail(where, "%s=%q names no subtype of %s", prop, tag, ctx)
			return
		}
		v.dispatching[ctx] = true
		v.validate(map[string]any{"$ref": target}, ctx, val, where)
		delete(v.dispatching, ctx)
		return
	}
	if parts := asList(s["allOf"]); parts != nil {
		// Each part declares some of the properties: closedness is judged on all of them together.
		closed := v.closed
		v.closed = false
		for _, part := range parts {
			v.validate(part.(map[string]any), ctx, val, where)
		}
		v.validateType(s, ctx, val, where)
		v.closed = closed
		if declared := v.declared(s, map[string]bool{}); closed && len(declared) > 0 {
			for _, k := range sortedAnyKeys(asObject(val)) {
				if !declared[k] {
					v.fail(where, "property %q not declared in %s", k, ctx)
				}
			}
		}
		return
	}
	if alts := asList(s["oneOf"]); alts != nil {
		v.validateOneOf(alts, ctx, val, where)
		return
	}
	v.validateType(s, ctx, val, where)
}

// declared are the properties a schema declares itself and through its allOf parts.
func (v *validator) declared(s map[string]any, into map[string]bool) map[string]bool {
	if r, ok := s["$ref"].(string); ok {
		s, _ = v.spec.schemas[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any)
	}
	for name := range asObject(s["properties"]) {
		into[name] = true
	}
	for _, part := range asList(s["allOf"]) {
		v.declared(asObject(part), into)
	}
	return into
}

// validateOneOf accepts the first alternative that declares every key of the
// object and validates (the NON_NULL alternatives omit absent fields).
func (v *validator) validateOneOf(alts []any, ctx string, val any, where string) {
	var firstErrs []string
	for _, alt := range alts {
		sub := &validator{spec: v.spec, closed: v.closed, optional: v.optional, dispatching: map[string]bool{}}
		resolved := alt.(map[string]any)
		if r, ok := resolved["$ref"].(string); ok {
			resolved = v.spec.schemas[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any)
		}
		props, _ := resolved["properties"].(map[string]any)
		for k := range asObject(val) {
			if _, declared := props[k]; !declared {
				sub.fail(where, "property %q not declared", k)
			}
		}
		if len(sub.errs) == 0 {
			sub.validate(alt.(map[string]any), ctx, val, where)
		}
		if len(sub.errs) == 0 {
			return
		}
		if firstErrs == nil {
			firstErrs = sub.errs
		}
	}
	v.fail(where, "matches no oneOf alternative: %v", firstErrs)
}

var integerRE = regexp.MustCompile(`^-?\d+$`)

func (v *validator) validateType(s map[string]any, ctx string, val any, where string) {
	switch typ, _ := s["type"].(string); typ {
	case "object":
		o, ok := val.(map[string]any)
		if !ok {
			v.fail(where, "want object, got %T", val)
			return
		}
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, has := o[r.(string)]; !has {
				v.fail(where, "missing required property %q", r)
			}
		}
		for _, name := range sortedAnyKeys(props) {
			pv, has := o[name]
			if !has {
				if v.strict && !v.optional[ctx+"."+name] {
					v.fail(where, "missing property %q (%s)", name, ctx)
				}
				continue
			}
			v.validate(props[name].(map[string]any), ctx+"."+name, pv, where+"."+name)
		}
		ap, open := s["additionalProperties"].(map[string]any)
		for _, k := range sortedAnyKeys(o) {
			if _, declared := props[k]; declared {
				continue
			}
			switch {
			case open:
				v.validate(ap, ctx+"[]", o[k], where+"."+k)
			case v.closed && len(props) > 0: // an object without properties is free-form (RawJson)
				v.fail(where, "property %q not declared in %s", k, ctx)
			}
		}
	case "array":
		a, ok := val.([]any)
		if !ok {
			v.fail(where, "want array, got %T", val)
			return
		}
		items, _ := s["items"].(map[string]any)
		for i, item := range a {
			if items != nil {
				v.validate(items, ctx+"[]", item, fmt.Sprintf("%s[%d]", where, i))
			}
		}
	case "string":
		str, ok := val.(string)
		if !ok {
			v.fail(where, "want string, got %T", val)
			return
		}
		if enum := asList(s["enum"]); enum != nil && !containsAny(enum, str) {
			v.fail(where, "%q not in enum %v", str, enum)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile("^(?:"+p+")$").MatchString(str) {
			v.fail(where, "%q does not match %s", str, p)
		}
	case "integer":
		if n, ok := val.(json.Number); !ok || !integerRE.MatchString(n.String()) {
			v.fail(where, "want integer, got %v", val)
		}
	case "number":
		// Flink's Jackson writes a double that is not finite as a string ("NaN": a percentile of
		// no checkpoints), which its documents do not say; real Flink answers so.
		if _, ok := val.(json.Number); !ok && val != "NaN" && val != "Infinity" && val != "-Infinity" {
			v.fail(where, "want number, got %T", val)
		}
	case "boolean":
		if _, ok := val.(bool); !ok {
			v.fail(where, "want boolean, got %T", val)
		}
	}
}

func asObject(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any            { l, _ := v.([]any); return l }

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
