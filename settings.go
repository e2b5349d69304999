package sova

import "context"

// UserSettings are what a person sets for themselves (GET/PUT /api/me):
// instructions added to every mode's prompt, the language answers are
// written in ("" follows the question), an IANA time zone ("" is the
// server's), and the preferences the assistant's interview agent saved
// (seed 004), keyed by the question they answer.
type UserSettings struct {
	CustomInstructions string `json:"custom_instructions"`
	Language           string `json:"language"`
	TimeZone           string `json:"time_zone"`
	// Model is the model the person chose for answers ("" is the
	// configured SOVA_MODEL).
	Model       string            `json:"model"`
	Preferences map[string]string `json:"preferences,omitempty"`
}

// SettingsStore keeps each user's settings. A user who never saved any
// has the zero UserSettings, not ErrNotFound.
type SettingsStore interface {
	UserSettings(ctx context.Context, userID string) (UserSettings, error)
	PutUserSettings(ctx context.Context, userID string, s UserSettings) error
}
