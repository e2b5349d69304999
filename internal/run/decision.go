package run

import (
	"fmt"
	"slices"
	"strings"
)

// checkDecision refuses a structured decision that names an action the
// waiting run does not hold, or one both approved and declined: nothing
// runs on a decision that is not exactly about what waits.
func checkDecision(held, approve, decline []string) error {
	for _, id := range append(slices.Clone(approve), decline...) {
		if !slices.Contains(held, id) {
			if len(held) == 0 {
				return fmt.Errorf("%w: the run holds no action to approve or decline (answer it with a message)", ErrDecision)
			}
			return fmt.Errorf("%w: the run holds no action %q; it holds %s", ErrDecision, id, strings.Join(held, ", "))
		}
		if slices.Contains(approve, id) && slices.Contains(decline, id) {
			return fmt.Errorf("%w: action %q is both approved and declined", ErrDecision, id)
		}
	}
	return nil
}

// decisionText is the stored question of a decision given without words.
func decisionText(approve, decline []string) string {
	var parts []string
	if len(approve) > 0 {
		parts = append(parts, "approve "+strings.Join(approve, ", "))
	}
	if len(decline) > 0 {
		parts = append(parts, "decline "+strings.Join(decline, ", "))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}
