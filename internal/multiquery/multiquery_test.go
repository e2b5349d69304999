package multiquery

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var events []Progress
	outs := Run(t.Context(), []string{"a", "bad", "ccc"}, func(p Progress) { events = append(events, p) },
		func(_ context.Context, i int, q string) ([]int, error) {
			if q == "bad" {
				return nil, errors.New("provider down")
			}
			return slices.Repeat([]int{i}, len(q)), nil
		})
	if len(outs) != 3 || len(outs[0].Results) != 1 || outs[1].Err == nil || !slices.Equal(outs[2].Results, []int{2, 2, 2}) {
		t.Fatalf("outcomes = %+v", outs)
	}
	if len(events) != 6 {
		t.Fatalf("events = %+v", events)
	}
	final := map[int]Progress{}
	for _, e := range events {
		if e.Total != 3 {
			t.Errorf("total = %d", e.Total)
		}
		if e.Status == StatusStarted {
			if _, done := final[e.Index]; done {
				t.Errorf("query %d started after it ended", e.Index)
			}
			continue
		}
		final[e.Index] = e
	}
	want := map[int]Progress{
		0: {Query: "a", Index: 0, Total: 3, Status: StatusCompleted, ResultsCount: 1},
		1: {Query: "bad", Index: 1, Total: 3, Status: StatusError, Error: "provider down"},
		2: {Query: "ccc", Index: 2, Total: 3, Status: StatusCompleted, ResultsCount: 3},
	}
	for i, w := range want {
		if final[i] != w {
			t.Errorf("final[%d] = %+v, want %+v", i, final[i], w)
		}
	}
	if err := AllFailed(outs); err != nil {
		t.Errorf("AllFailed = %v", err)
	}
	if err := AllFailed([]Outcome[int]{{Err: errors.New("x")}, {Err: errors.New("y")}}); err == nil || !strings.Contains(err.Error(), "y") {
		t.Errorf("AllFailed = %v", err)
	}
}

func TestProgressJSON(t *testing.T) {
	tests := []struct {
		p    Progress
		want string
	}{
		{Progress{Query: "q", Index: 1, Total: 2, Status: StatusStarted}, `{"query":"q","index":1,"total":2,"status":"started"}`},
		{Progress{Query: "q", Index: 1, Total: 2, Status: StatusCompleted}, `{"query":"q","index":1,"total":2,"status":"completed","resultsCount":0}`},
		{Progress{Query: "q", Total: 1, Status: StatusCompleted, ResultsCount: 7}, `{"query":"q","index":0,"total":1,"status":"completed","resultsCount":7}`},
		{Progress{Query: "q", Total: 1, Status: StatusError, Error: "boom"}, `{"query":"q","index":0,"total":1,"status":"error","error":"boom"}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.p)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.p, b, err, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr string
	}{
		{in: []string{" a ", "b"}, want: []string{"a", "b"}},
		{in: nil, wantErr: "at least one"},
		{in: []string{"1", "2", "3", "4", "5", "6"}, wantErr: "at most 5"},
		{in: []string{"a", "  "}, wantErr: "query 2 is empty"},
		{in: []string{"ёжик-ёжик"}, want: []string{"ёжик-ёжик"}},
		{in: []string{"ёжик-ёжик!"}, wantErr: "longer than 9"},
	}
	for _, tc := range tests {
		got, err := Validate(tc.in, 9)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate(%q) err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Validate(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func TestAt(t *testing.T) {
	if At([]int{5, 0}, 0, 20) != 5 || At([]int{5, 0}, 1, 20) != 20 || At(nil, 3, 20) != 20 || At([]string{"day"}, 0, "week") != "day" {
		t.Error("At")
	}
}
