package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

// Settings through GET/PUT /api/me, checked, kept per person, and used by
// the next run: the model chosen, the instructions and the language in
// the prompt, the time zone in its date.
func TestSettings(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newAccountsEnv(t, engine, nil)
			e.model.SetModels("main-model", "big-model")
			e.addUser(t, "ann", sova.RolePro, "ann's password")
			e.addUser(t, "bob", sova.RolePro, "bob's password")
			ann, bob := e.browser(t), e.browser(t)
			ann.signIn("ann", "ann's password")
			bob.signIn("bob", "bob's password")

			var me struct {
				Settings *sova.UserSettings
			}
			if resp, body := ann.do("GET", "/api/me", ""); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &me) != nil ||
				me.Settings == nil || me.Settings.Language != "" || me.Settings.Model != "" {
				t.Fatalf("me before: %d %s", resp.StatusCode, body)
			}
			resp, body := ann.do("GET", "/api/models", "")
			var models struct {
				Models  []string
				Default string
			}
			if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &models) != nil || strings.Join(models.Models, ",") != "main-model,big-model" || models.Default != "main-model" {
				t.Errorf("models: %d %s", resp.StatusCode, body)
			}
			for name, bad := range map[string]string{
				"language":     `{"language":"xx"}`,
				"time zone":    `{"time_zone":"Mars/Olympus"}`,
				"model":        `{"model":"no-such-model"}`,
				"instructions": `{"custom_instructions":"` + strings.Repeat("a", 4001) + `"}`,
			} {
				if resp, body := ann.do("PUT", "/api/me", bad); resp.StatusCode != 400 || errorCode(body) != "invalid_settings" {
					t.Errorf("%s: %d %s", name, resp.StatusCode, body)
				}
			}
			resp, body = ann.do("PUT", "/api/me", `{"custom_instructions":"Always end with the word PINEAPPLE.","language":"de","time_zone":"Pacific/Kiritimati","model":"big-model"}`)
			if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &me) != nil || me.Settings == nil ||
				me.Settings.Language != "de" || me.Settings.Model != "big-model" || me.Settings.TimeZone != "Pacific/Kiritimati" {
				t.Fatalf("put: %d %s", resp.StatusCode, body)
			}
			// A partial update keeps the rest.
			if resp, body := ann.do("PUT", "/api/me", `{"language":"ru"}`); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &me) != nil ||
				me.Settings.Language != "ru" || me.Settings.Model != "big-model" || !strings.Contains(me.Settings.CustomInstructions, "PINEAPPLE") {
				t.Fatalf("partial put: %d %s", resp.StatusCode, body)
			}
			// Bob's are his own.
			if resp, body := bob.do("GET", "/api/me", ""); resp.StatusCode != 200 || strings.Contains(body, "PINEAPPLE") || strings.Contains(body, "big-model") {
				t.Errorf("bob's me: %s", body)
			}

			before := len(e.model.Requests())
			if resp, body := ann.do("POST", "/api/search", `{"group":"chat","timezone":"Europe/London","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
				t.Fatalf("ask: %d %s", resp.StatusCode, body)
			}
			reqs := e.model.Requests()[before:]
			var answer string
			for _, r := range reqs {
				if strings.Contains(r.System(), "PINEAPPLE") {
					answer = r.Model
					sys := r.System()
					// Kiritimati is UTC+14: its date, not London's.
					day := time.Now().In(mustLoc(t, "Pacific/Kiritimati")).Format("2 January 2006")
					if !strings.Contains(sys, "Russian") || !strings.Contains(sys, day) {
						t.Errorf("system prompt names neither Russian nor %s: %s", day, sys)
					}
				}
			}
			if answer != "big-model" {
				t.Errorf("the answer's call: model %q (%d calls); want big-model with the instructions", answer, len(reqs))
			}
			// Bob's run uses the defaults.
			before = len(e.model.Requests())
			bob.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
			for _, r := range e.model.Requests()[before:] {
				if strings.Contains(r.System(), "PINEAPPLE") || r.Model == "big-model" {
					t.Errorf("bob's run used ann's settings: %s %s", r.Model, r.System())
				}
			}
		})
	}
}

func mustLoc(t *testing.T, name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The admin's usage report: runs, tokens and searches per user per day;
// 403 for anyone else.
func TestAdminUsage(t *testing.T) {
	e := newAccountsEnv(t, "sqlite", nil)
	e.addUser(t, "root", sova.RoleAdmin, "root's password")
	e.addUser(t, "ann", sova.RolePro, "ann's password")
	admin, ann := e.browser(t), e.browser(t)
	admin.signIn("root", "root's password")
	ann.signIn("ann", "ann's password")
	for range 2 {
		if resp, body := ann.do("POST", "/api/search", `{"group":"search","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`); resp.StatusCode != 200 {
			t.Fatalf("ask: %d %s", resp.StatusCode, body)
		}
	}
	if resp, body := ann.do("GET", "/api/admin/usage", ""); resp.StatusCode != 403 || errorCode(body) != "admin_only" {
		t.Errorf("ann's report: %d %s", resp.StatusCode, body)
	}
	resp, body := admin.do("GET", "/api/admin/usage?days=3&user=ann", "")
	var rep struct {
		Days  int
		Usage []struct {
			Name, Day                string
			Runs, Tokens, Searches   int64
			Messages, Extreme, Other int64
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &rep) != nil || rep.Days != 3 || len(rep.Usage) != 1 {
		t.Fatalf("report: %d %s", resp.StatusCode, body)
	}
	u := rep.Usage[0]
	if u.Name != "ann" || u.Day != time.Now().UTC().Format(time.DateOnly) || u.Runs != 2 || u.Tokens <= 0 || u.Searches < 2 || u.Messages != 2 {
		t.Errorf("ann's day: %+v", u)
	}
	for q, code := range map[string]string{"?days=0": "invalid_days", "?days=x": "invalid_days", "?user=nobody": "user_not_found"} {
		if resp, body := admin.do("GET", "/api/admin/usage"+q, ""); resp.StatusCode/100 != 4 || errorCode(body) != code {
			t.Errorf("%s: %d %s", q, resp.StatusCode, body)
		}
	}
}
