package llm

import (
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Enum is implemented by a string type whose values are a closed set: in
// a struct given to Structured, a field of such a type is an enum in the
// schema sent to the model, a reply that spells a value loosely ("High ",
// "MODERATE") is mapped to it, and any other value is re-asked.
type Enum interface {
	Enum() []string
}

var enumType = reflect.TypeFor[Enum]()

// applyEnums sets the enum of every property of s whose Go field in t is
// an Enum, in nested structs and lists too.
func applyEnums(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(enumType) && t.Kind() == reflect.String {
		s.Enum = nil
		for _, v := range reflect.Zero(t).Interface().(Enum).Enum() {
			s.Enum = append(s.Enum, v)
		}
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		applyEnums(t.Elem(), s.Items)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			applyEnums(f.Type, s.Properties[name])
		}
	}
}

// looseEnums maps, in a decoded reply, each string that the schema closes
// to a set and that spells one of its values loosely (case, spaces,
// hyphens, underscores) to that value. Other values are left for
// validation to reject. changed is set when a value was mapped.
func looseEnums(s *jsonschema.Schema, v any, changed *bool) any {
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		if len(s.Enum) == 0 {
			return x
		}
		key := looseKey(x)
		var found []any
		for _, e := range s.Enum {
			if str, ok := e.(string); ok {
				if str == x {
					return x
				}
				if looseKey(str) == key {
					found = append(found, e)
				}
			}
		}
		if len(found) == 1 {
			*changed = true
			return found[0]
		}
	case []any:
		for i := range x {
			x[i] = looseEnums(s.Items, x[i], changed)
		}
	case map[string]any:
		for k, val := range x {
			x[k] = looseEnums(s.Properties[k], val, changed)
		}
	}
	return v
}

func looseKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '\t', '\n', '.':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}
