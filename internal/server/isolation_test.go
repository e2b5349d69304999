package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sova-ai/sova"
)

// Two people signed in: everything one keeps is a 404 for the other, on
// every route, and nothing of it shows in the other's lists.
func TestIsolationBetweenAccounts(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newAccountsEnv(t, engine, nil)
			e.addUser(t, "ann", sova.RolePro, "ann's password")
			bobAcc := e.addUser(t, "bob", sova.RolePro, "bob's password")
			ann, bob := e.browser(t), e.browser(t)
			ann.signIn("ann", "ann's password")
			bob.signIn("bob", "bob's password")

			// Bob's chat and run.
			resp, body := bob.do("POST", "/api/search", `{"id":"bobchat","group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
			if resp.StatusCode != 200 {
				t.Fatalf("bob's question: %d %s", resp.StatusCode, body)
			}
			runID := resp.Header.Get("X-Run-ID")
			// Bob's space with a document.
			resp, body = bob.do("POST", "/api/spaces", `{"name":"bobspace"}`)
			var sp sova.Space
			if resp.StatusCode != 201 || json.Unmarshal([]byte(body), &sp) != nil {
				t.Fatalf("bob's space: %d %s", resp.StatusCode, body)
			}
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, _ := mw.CreateFormFile("file", "vostok.md")
			_, _ = io.WriteString(fw, vostokMD)
			_ = mw.Close()
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/spaces/"+sp.ID+"/documents", &buf)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			r, err := bob.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != 201 && r.StatusCode != 200 {
				t.Fatalf("bob's upload: %d", r.StatusCode)
			}
			docs, err := e.app.Store.ListDocuments(context.Background(), bobAcc.ID, sp.ID)
			if err != nil || len(docs) != 1 {
				t.Fatalf("bob's documents: %+v %v", docs, err)
			}
			docID := docs[0].ID
			// Bob's agent.
			ag := &sova.Agent{UserID: bobAcc.ID, Mode: "sgr_agent", Task: "bob's task", State: sova.AgentWaiting}
			if err := e.app.Store.CreateAgent(context.Background(), ag); err != nil {
				t.Fatal(err)
			}

			// Bob's memory, and his space connected to a folder.
			resp, body = bob.do("POST", "/api/memories", `{"content":"bob's memory: the safe code is 4711"}`)
			var mem sova.Memory
			if resp.StatusCode != 201 || json.Unmarshal([]byte(body), &mem) != nil {
				t.Fatalf("bob's memory: %d %s", resp.StatusCode, body)
			}
			if err := e.app.Store.PutConnector(context.Background(), &sova.Connector{UserID: bobAcc.ID, SpaceID: sp.ID,
				Kind: sova.ConnectorWebDAV, Location: "https://cloud.example/dav/", Username: "bob", Password: "bob's share password"}); err != nil {
				t.Fatal(err)
			}
			// Bob's settings.
			if resp, body := bob.do("PUT", "/api/me", `{"custom_instructions":"bob's secret instructions","time_zone":"Asia/Tokyo"}`); resp.StatusCode != 200 {
				t.Fatalf("bob's settings: %d %s", resp.StatusCode, body)
			}

			// Bob sees his own.
			for _, path := range []string{"/api/chats/bobchat", "/api/runs/" + runID, "/api/spaces/" + sp.ID, "/agents/" + ag.ID + "/state", "/api/spaces/" + sp.ID + "/connector"} {
				if resp, body := bob.do("GET", path, ""); resp.StatusCode != 200 {
					t.Errorf("bob's own %s: %d %s", path, resp.StatusCode, body)
				}
			}

			// Ann gets 404 everywhere.
			for _, rt := range []struct{ method, path, body string }{
				{"GET", "/api/chats/bobchat", ""},
				{"DELETE", "/api/chats/bobchat", ""},
				{"GET", "/api/runs/" + runID, ""},
				{"GET", "/api/runs/" + runID + "/stream", ""},
				{"POST", "/api/runs/" + runID + "/cancel", ""},
				{"POST", "/api/runs/" + runID + "/restart", ""},
				{"GET", "/api/runs/" + runID + "/files", ""},
				{"GET", "/api/runs/" + runID + "/files.zip", ""},
				{"GET", "/api/runs/" + runID + "/files/main.md", ""},
				{"GET", "/api/runs/" + runID + "/report.md", ""},
				{"GET", "/api/runs/" + runID + "/report.pdf", ""},
				{"GET", "/api/spaces/" + sp.ID, ""},
				{"PATCH", "/api/spaces/" + sp.ID, `{"name":"mine"}`},
				{"DELETE", "/api/spaces/" + sp.ID, ""},
				{"GET", "/api/spaces/" + sp.ID + "/documents", ""},
				{"GET", "/api/spaces/" + sp.ID + "/documents/" + docID, ""},
				{"DELETE", "/api/spaces/" + sp.ID + "/documents/" + docID, ""},
				{"GET", "/api/spaces/" + sp.ID + "/search?q=budget", ""},
				{"GET", "/api/passages?url=" + url.QueryEscape("sova://spaces/"+sp.ID+"/documents/"+docID+"#chunk-1"), ""},
				{"PATCH", "/api/chats/bobchat", `{"title":"mine now"}`},
				{"GET", "/api/chats/bobchat/export.md", ""},
				{"GET", "/agents/" + ag.ID + "/state", ""},
				{"DELETE", "/api/memories/" + mem.ID, ""},
				{"GET", "/api/spaces/" + sp.ID + "/connector", ""},
				{"POST", "/api/spaces/" + sp.ID + "/connector", `{"kind":"webdav","location":"https://evil.example/dav/"}`},
				{"DELETE", "/api/spaces/" + sp.ID + "/connector", ""},
				{"POST", "/api/spaces/" + sp.ID + "/connector/sync", ""},
				{"POST", "/v1/chat/completions", `{"model":"` + ag.ID + `","messages":[{"role":"user","content":"go on"}]}`},
				{"POST", "/v1/chat/completions", `{"model":"` + runID + `","messages":[{"role":"user","content":"go on"}]}`},
			} {
				resp, body := ann.do(rt.method, rt.path, rt.body)
				// model=<id> answers as for an unknown model (400
				// model_not_found, OpenAI's code), the same as for an id
				// that does not exist.
				want := http.StatusNotFound
				if strings.HasPrefix(rt.path, "/v1/") {
					want = http.StatusBadRequest
					if errorCode(body) != "model_not_found" {
						t.Errorf("ann: model=bob's id: %s", body)
					}
				}
				if resp.StatusCode != want {
					t.Errorf("ann: %s %s of bob's: %d %s", rt.method, rt.path, resp.StatusCode, body)
				}
				if strings.Contains(body, "Australia") || strings.Contains(body, "Vostok") || strings.Contains(body, "bob's task") || strings.Contains(body, "4711") {
					t.Errorf("ann: %s %s shows bob's data: %s", rt.method, rt.path, body)
				}
			}
			// A chat's stream answers as for a chat that does not exist.
			resp, _ = ann.do("GET", "/api/chats/bobchat/stream", "")
			none, _ := ann.do("GET", "/api/chats/no-such-chat/stream", "")
			if resp.StatusCode != none.StatusCode {
				t.Errorf("stream of bob's chat: %d, of no chat: %d", resp.StatusCode, none.StatusCode)
			}
			// Settings and usage are each one's own: ann's /api/me shows none
			// of bob's, her PUT changes only hers, and the usage report is
			// an admin's.
			if resp, body := ann.do("PUT", "/api/me", `{"language":"de"}`); resp.StatusCode != 200 || strings.Contains(body, "bob's secret") {
				t.Errorf("ann's settings: %d %s", resp.StatusCode, body)
			}
			if resp, body := ann.do("GET", "/api/admin/usage?user=bob", ""); resp.StatusCode != 403 || strings.Contains(body, bobAcc.ID) {
				t.Errorf("ann: bob's usage: %d %s", resp.StatusCode, body)
			}
			if resp, body := bob.do("GET", "/api/me", ""); resp.StatusCode != 200 || !strings.Contains(body, "bob's secret") || strings.Contains(body, `"de"`) {
				t.Errorf("bob's settings after ann's: %d %s", resp.StatusCode, body)
			}
			// Nothing of bob's in ann's lists.
			for _, path := range []string{"/api/chats", "/api/spaces", "/agents", "/v1/models", "/api/memories", "/api/memories?q=safe+code", "/api/connectors", "/api/me", "/api/models"} {
				resp, body := ann.do("GET", path, "")
				if resp.StatusCode != 200 || strings.Contains(body, "bobchat") || strings.Contains(body, sp.ID) || strings.Contains(body, "4711") ||
					strings.Contains(body, ag.ID) || strings.Contains(body, runID) || strings.Contains(body, "bobspace") ||
					strings.Contains(body, "bob's secret") || strings.Contains(body, "Asia/Tokyo") {
					t.Errorf("ann's %s: %d %s", path, resp.StatusCode, body)
				}
			}
			// And bob's things are all still there; his share's password
			// never shows, not even to him.
			if resp, body := bob.do("GET", "/api/memories?q=safe+code", ""); resp.StatusCode != 200 || !strings.Contains(body, "4711") {
				t.Errorf("bob's memory after ann's attempts: %d %s", resp.StatusCode, body)
			}
			for _, path := range []string{"/api/spaces/" + sp.ID + "/connector", "/api/connectors"} {
				if resp, body := bob.do("GET", path, ""); resp.StatusCode != 200 || strings.Contains(body, "share password") || !strings.Contains(body, `"hasPassword":true`) {
					t.Errorf("bob's %s: %d %s", path, resp.StatusCode, body)
				}
			}
			// And bob's things are all still there.
			if resp, _ := bob.do("GET", "/api/spaces/"+sp.ID+"/documents/"+docID, ""); resp.StatusCode != 200 {
				t.Errorf("bob's document after ann's attempts: %d", resp.StatusCode)
			}
			if resp, _ := bob.do("GET", "/api/chats/bobchat", ""); resp.StatusCode != 200 {
				t.Errorf("bob's chat after ann's attempts: %d", resp.StatusCode)
			}
		})
	}
}
