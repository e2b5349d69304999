// Package jsoniter stands in for github.com/json-iterator/go in Sova's
// build (see the replace directive in Sova's go.mod and
// docs/architecture.md, "Binary size").
//
// The only user in Sova's build is bleve's geo shapes
// (github.com/blevesearch/geo/geojson), which asks for the configuration
// compatible with the standard library and calls Marshal and Unmarshal.
// The original package reaches reflect.Type.MethodByName with names known
// only at run time (through modern-go/reflect2), and a reachable call of
// that kind makes the Go linker keep every exported method of every type
// in the program: about 40 MB of sova's binary. encoding/json gives the
// same results for those calls.
package jsoniter

import "encoding/json"

// API is the part of the original's API that Sova's build uses.
type API interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

type std struct{}

func (std) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (std) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// ConfigCompatibleWithStandardLibrary behaves as encoding/json, which is
// what the original promises for it.
var ConfigCompatibleWithStandardLibrary API = std{}

// Marshal is encoding/json's Marshal.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal is encoding/json's Unmarshal.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
