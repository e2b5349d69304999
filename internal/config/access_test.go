package config

import (
	"strings"
	"testing"
)

func TestAccessSettings(t *testing.T) {
	cfg, err := FromEnv(map[string]string{
		"SOVA_PUBLIC_URL":    " https://sova.example.com/ ",
		"SOVA_ALLOWED_HOSTS": "Sova.LAN, *.corp.example ,10.0.0.5:8080,[fd00::5],",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublicURL != "https://sova.example.com" {
		t.Errorf("public url = %q", cfg.PublicURL)
	}
	if got := strings.Join(cfg.AllowedHosts, "|"); got != "sova.lan|*.corp.example|10.0.0.5:8080|[fd00::5]" {
		t.Errorf("allowed hosts = %q", got)
	}
	cfg, err = FromEnv(map[string]string{"SOVA_ALLOWED_HOSTS": "*"})
	if err != nil || len(cfg.AllowedHosts) != 1 || cfg.AllowedHosts[0] != "*" {
		t.Errorf("*: %v %v", cfg, err)
	}
	cfg, err = FromEnv(map[string]string{})
	if err != nil || cfg.PublicURL != "" || len(cfg.AllowedHosts) != 0 {
		t.Errorf("defaults: %q %q %v", cfg.PublicURL, cfg.AllowedHosts, err)
	}
}

func TestAccessSettingsInvalid(t *testing.T) {
	for k, v := range map[string]string{
		"SOVA_PUBLIC_URL":    "sova.example.com",
		"SOVA_ALLOWED_HOSTS": "https://sova.example.com",
	} {
		if _, err := FromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: err = %v, want one naming the variable", k, v, err)
		}
	}
	for _, v := range []string{"ftp://sova.example.com", "https://", "https://user:pw@sova.example.com", "://x"} {
		if _, err := FromEnv(map[string]string{"SOVA_PUBLIC_URL": v}); err == nil {
			t.Errorf("SOVA_PUBLIC_URL=%s accepted", v)
		}
	}
	for _, v := range []string{"sova.lan/app", "a*b.example", "*", "*.", "user@host", "sova lan"} {
		_, err := FromEnv(map[string]string{"SOVA_ALLOWED_HOSTS": v})
		if (err == nil) != (v == "*") {
			t.Errorf("SOVA_ALLOWED_HOSTS=%s: err = %v", v, err)
		}
	}
}
