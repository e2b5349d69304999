package config

import (
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var updateEnv = flag.Bool("update-env", false, "rewrite testdata/env.golden")

// envVars lists the variables the type t reads, with their defaults, as
// "NAME=default" lines, walking nested settings structs.
func envVars(t reflect.Type, out *[]string) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		switch {
		case name == "-":
		case name != "":
			*out = append(*out, name+"="+f.Tag.Get("envDefault"))
		case f.Type.Kind() == reflect.Struct:
			envVars(f.Type, out)
		}
	}
}

// readVars are the variables a configuration reads: its own and those of
// the provider settings FromEnv read.
func readVars(t *testing.T) []string {
	t.Helper()
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	envVars(reflect.TypeFor[Config](), &out)
	for _, p := range cfg.Providers {
		envVars(reflect.TypeOf(p.Env).Elem(), &out)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The settings and their defaults are docs/configuration.md's contract:
// moving where a setting is declared must not add, drop or change one.
// testdata/env.golden was written (-update-env) while config still
// declared the provider settings itself.
func TestEnvVarsUnchanged(t *testing.T) {
	got := strings.Join(readVars(t), "\n") + "\n"
	if *updateEnv {
		if err := os.WriteFile("testdata/env.golden", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/env.golden")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for _, l := range wl {
			if !slices.Contains(gl, l) {
				t.Errorf("no longer read: %s", l)
			}
		}
		for _, l := range gl {
			if !slices.Contains(wl, l) {
				t.Errorf("newly read: %s", l)
			}
		}
	}
}
