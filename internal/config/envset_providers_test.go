package config

import (
	"reflect"

	"github.com/sova-ai/sova/internal/provider/all"
)

// providerVars are the variables the provider packages' settings read.
func providerVars() []string {
	var out []string
	for _, p := range all.Settings() {
		envVars(reflect.TypeOf(p.Env).Elem(), &out)
	}
	return out
}
