package lang

import "testing"

func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		// Short and long questions in the languages Sova answers in.
		{"How did presidents describe the economy in the 1930s?", "en"},
		{"What is the capital of Australia?", "en"},
		{"best laptop 2024", "en"},
		// A few words' trigrams are not evidence of another language.
		{"last question", "en"},
		{"Berlin weather today", "en"},
		{"Explain how vaccines train the immune system and why boosters are needed after some years.", "en"},
		{"Как президенты описывали экономику в 1930-х?", "ru"},
		{"лучший ноутбук 2024", "ru"},
		{"Почему небо голубое?", "ru"},
		{"Кто выиграл чемпионат мира", "ru"},
		{"Як президенти описували економіку в 1930-х роках?", "uk"},
		{"Яка столиця Австралії?", "uk"},
		{"Хто виграв чемпіонат світу", "uk"},
		{"Поясни, як вакцини тренують імунну систему і навіщо потрібні повторні щеплення через кілька років.", "uk"},
		{"Wie haben Präsidenten die Wirtschaft in den 1930er Jahren beschrieben?", "de"},
		{"Warum ist der Himmel blau?", "de"},
		{"Was ist die Hauptstadt von Australien?", "de"},
		{"Comment les présidents décrivaient-ils l'économie dans les années 1930 ?", "fr"},
		{"Quelle est la capitale de l'Australie ?", "fr"},
		{"Qu'est-ce que l'inflation et pourquoi les prix augmentent-ils ?", "fr"},
		{"¿Cómo describían los presidentes la economía en los años 1930?", "es"},
		{"¿Por qué el cielo es azul?", "es"},
		{"Explica cómo las vacunas entrenan el sistema inmunitario y por qué se necesitan refuerzos después de unos años.", "es"},
		{"Perché il cielo è blu?", "it"},
		{"Qual é a capital da Austrália?", "pt"},
		{"Dlaczego niebo jest niebieskie?", "pl"},
		// Mixed scripts: the script most words are in decides, and words of
		// another script do not sway the choice within it.
		{"Как настроить Kubernetes ingress в GKE?", "ru"},
		{"Як налаштувати Kubernetes ingress у GKE?", "uk"},
		{"Как работает WAL в SQLite?", "ru"},
		{"What does «спасибо» mean?", "en"},
		{"Что значит «serendipity» по-английски?", "ru"},
		{"Was bedeutet das russische Wort «спасибо»?", "de"},
		// Scripts one language owns.
		{"Τι είναι η πρωτεύουσα της Αυστραλίας;", "el"},
		{"オーストラリアの首都はどこですか", "ja"},
		{"澳大利亚的首都是哪里", "zh"},
		{"호주의 수도는 어디입니까", "ko"},
		{"ما هي عاصمة أستراليا", "ar"},
		// Nothing to tell by.
		{"12345 ?!", "en"},
		{"", "en"},
		{"GKE", "en"},
	}
	for _, tt := range tests {
		if got := Detect(tt.text); got.Code != tt.want {
			t.Errorf("Detect(%q) = %s, want %s", tt.text, got.Code, tt.want)
		} else if got.Name == "" {
			t.Errorf("Detect(%q) has no name", tt.text)
		}
	}
}

// Russian and English keep their values, which modes compare against.
func TestKnownValues(t *testing.T) {
	if Detect("Привет, как дела?") != Russian || Detect("Hello, how are you?") != English {
		t.Error("Russian or English changed")
	}
}

func BenchmarkDetect(b *testing.B) {
	for b.Loop() {
		Detect("Как настроить Kubernetes ingress в GKE и зачем нужен cert-manager?")
	}
}
