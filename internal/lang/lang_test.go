package lang

import "testing"

func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"How did presidents describe the economy in the 1930s?", "en"},
		{"Как президенты описывали экономику в 1930-х?", "ru"},
		{"Как настроить Kubernetes ingress в GKE?", "ru"},
		{"What does «спасибо» mean?", "en"},
		{"12345 ?!", "en"},
		{"", "en"},
	}
	for _, tt := range tests {
		if got := Detect(tt.text).Code; got != tt.want {
			t.Errorf("Detect(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
}
