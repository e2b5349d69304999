package config

// renamed lists settings whose first names did not match the modes they
// configure ("speed" and "balanced" were the seed's names of the search
// and deep_search modes). The old names keep working; when both are set,
// the new one wins.
var renamed = []struct{ name, old string }{
	{"SOVA_SEARCH_MAX_ITERATIONS", "SOVA_SPEED_MAX_ITERATIONS"},
	{"SOVA_DEEP_SEARCH_MAX_ITERATIONS", "SOVA_BALANCED_MAX_ITERATIONS"},
	{"SOVA_DEEP_SEARCH_SOURCES", "SOVA_BALANCED_RERANK_TOP_K"},
	{"SOVA_DEEP_SEARCH_PAGES", "SOVA_BALANCED_SCRAPE_TOP_N"},
}

// withAliases returns vars with each old name's value under the new name
// when the new name is not set. vars itself is not changed.
func withAliases(vars map[string]string) map[string]string {
	out := make(map[string]string, len(vars)+len(renamed))
	for k, v := range vars {
		out[k] = v
	}
	for _, r := range renamed {
		if v, ok := vars[r.old]; ok {
			if _, set := vars[r.name]; !set {
				out[r.name] = v
			}
		}
	}
	return out
}

// settingName is the name an error gives a setting: with its old name
// too, since a person may have set that one.
func settingName(name string) string {
	for _, r := range renamed {
		if r.name == name {
			return name + " (formerly " + r.old + ")"
		}
	}
	return name
}
