package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.SettingsStore = (*DB)(nil)

// UserSettings returns a user's settings; the zero value when none were
// saved.
func (s *DB) UserSettings(ctx context.Context, userID string) (sova.UserSettings, error) {
	var out sova.UserSettings
	var prefs string
	err := s.queryRow(ctx, `SELECT custom_instructions, language, time_zone, model, preferences
		FROM user_settings WHERE user_id = ?`, userID).Scan(&out.CustomInstructions, &out.Language, &out.TimeZone, &out.Model, &prefs)
	if isNoRows(err) {
		return sova.UserSettings{}, nil
	}
	if err != nil {
		return out, fmt.Errorf("user settings: %w", s.d.mapErr(err))
	}
	if prefs != "" && prefs != "{}" {
		if err := json.Unmarshal([]byte(prefs), &out.Preferences); err != nil {
			return out, fmt.Errorf("user settings: preferences: %w", err)
		}
	}
	return out, nil
}

// PutUserSettings replaces a user's settings.
func (s *DB) PutUserSettings(ctx context.Context, userID string, us sova.UserSettings) error {
	if userID == "" {
		return fmt.Errorf("%w: settings need a user", sova.ErrInvalid)
	}
	prefs := []byte("{}")
	if len(us.Preferences) > 0 {
		var err error
		if prefs, err = json.Marshal(us.Preferences); err != nil {
			return fmt.Errorf("%w: preferences: %v", sova.ErrInvalid, err)
		}
	}
	_, err := s.exec(ctx, `INSERT INTO user_settings (user_id, custom_instructions, language, time_zone, model, preferences, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET custom_instructions = excluded.custom_instructions,
			language = excluded.language, time_zone = excluded.time_zone, model = excluded.model,
			preferences = excluded.preferences, updated_at = excluded.updated_at`,
		userID, us.CustomInstructions, us.Language, us.TimeZone, us.Model, string(prefs), s.d.time(storedTime(time.Now())))
	if err != nil {
		return fmt.Errorf("put user settings: %w", s.d.mapErr(err))
	}
	return nil
}
